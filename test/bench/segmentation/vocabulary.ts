/**
 * The fictional repositories the synthetic sessions work in. Every name, path, identifier and
 * error here is invented for the benchmark (any resemblance to a real project is accidental);
 * the error messages imitate the shape of real toolchain output.
 *
 * `alt` phrases name the same area of a module with words that share nothing with `area`, the
 * file names or the symbols: they produce the "same task, different words" continuations.
 */

export interface ModuleVocab {
  name: string;
  /** How developers name the area: "the auth middleware". */
  area: string[];
  /** The same area in other words (no word shared with `area`, files or symbols). */
  alt: string[];
  files: string[];
  symbols: string[];
  tests: string[];
  errors: string[];
  /** Bug symptoms, as a clause: "refresh tokens expire after 5 minutes". */
  symptoms: string[];
  /** Features, as a noun phrase: "support for passkeys". */
  features: string[];
  /** Tables, collections, keys, topics. */
  data: string[];
  /** Endpoints, commands, screens — what a user or client touches. */
  surface: string[];
  /** Performance problems, as a clause. */
  perf: string[];
}

export interface DependencyVocab {
  name: string;
  from: string;
  to: string;
}

export interface RepoVocab {
  name: string;
  tenantId: string;
  language: 'typescript' | 'rust' | 'python' | 'go' | 'kotlin';
  users: string[];
  testCmd: string;
  buildCmd: string;
  lintCmd: string;
  /** The package manager's audit/upgrade wording. */
  lockfile: string;
  deps: DependencyVocab[];
  ciJobs: string[];
  buildErrors: string[];
  envs: string[];
  envErrors: string[];
  services: string[];
  secrets: string[];
  designTopics: string[];
  docs: string[];
  /** Task families that make no sense in this repository. */
  excludeFamilies?: string[];
  modules: ModuleVocab[];
}

const PAYMENTS_API: RepoVocab = {
  name: 'payments-api',
  tenantId: 'tenant-northwind',
  language: 'typescript',
  users: ['u-maria.santos', 'u-kenji.ito', 'u-dev.patel'],
  testCmd: 'npm test',
  buildCmd: 'npm run build',
  lintCmd: 'npm run lint',
  lockfile: 'package-lock.json',
  deps: [
    { name: 'stripe', from: '14.25.0', to: '17.3.1' },
    { name: '@nestjs/core', from: '10.3.2', to: '11.0.9' },
    { name: 'typeorm', from: '0.3.17', to: '0.3.22' },
    { name: 'pino', from: '8.19.0', to: '9.5.0' },
    { name: 'zod', from: '3.22.4', to: '4.1.0' },
    { name: 'jsonwebtoken', from: '8.5.1', to: '9.0.2' },
  ],
  ciJobs: ['unit-tests', 'lint', 'typecheck', 'e2e', 'docker-build'],
  buildErrors: [
    "src/invoices/invoice.service.ts(88,17): error TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.",
    "Error: Cannot find module '@payments/shared/money' from 'src/ledger/ledger.service.ts'",
    'npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree',
    'ESLint: 14 problems (14 errors, 0 warnings) — @typescript-eslint/no-floating-promises',
  ],
  envs: ['staging', 'production', 'sandbox'],
  envErrors: [
    'Error: connect ECONNREFUSED 127.0.0.1:5432',
    'redis: MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk',
    'port 3000 is already in use',
  ],
  services: ['postgres', 'redis', 'the stripe mock'],
  secrets: ['STRIPE_SECRET_KEY', 'JWT_SIGNING_KEY', 'DATABASE_URL'],
  designTopics: [
    'moving the ledger to double-entry with immutable journal rows',
    'whether webhooks should go through a queue instead of being handled inline',
    'idempotency keys for every POST endpoint',
    'splitting invoices and payouts into separate services',
  ],
  docs: ['README.md', 'docs/architecture.md', 'docs/runbook.md', 'CHANGELOG.md'],
  modules: [
    {
      name: 'auth',
      area: ['auth', 'the auth middleware', 'authentication'],
      alt: ['login', 'sign-in', 'people getting kicked out', 'SSO'],
      files: [
        'src/auth/jwt.strategy.ts',
        'src/auth/auth.guard.ts',
        'src/auth/token-refresh.service.ts',
      ],
      symbols: ['JwtStrategy.validate', 'AuthGuard.canActivate', 'refreshAccessToken', 'TokenPair'],
      tests: ['auth.guard.spec.ts', 'token-refresh.service.spec.ts'],
      errors: [
        'UnauthorizedException: jwt expired',
        "TypeError: Cannot read properties of undefined (reading 'tenantId')\n    at AuthGuard.canActivate (src/auth/auth.guard.ts:41:33)",
        'JsonWebTokenError: invalid signature',
      ],
      symptoms: [
        'refresh tokens expire after 5 minutes instead of 30 days',
        'the guard lets requests through without a tenant header',
        'users with two orgs get the wrong tenant after refreshing',
        'the token refresh fires twice and the second call gets a 401',
      ],
      features: ['API key auth for server-to-server calls', 'token revocation on password change'],
      data: ['refresh_tokens table', 'api_keys table'],
      surface: ['POST /v1/auth/refresh', 'POST /v1/auth/login'],
      perf: ['every request hits the database to load the tenant in the guard'],
    },
    {
      name: 'invoices',
      area: ['invoices', 'invoice generation', 'the invoice service'],
      alt: ['billing documents', 'what customers get emailed each month', 'the PDFs'],
      files: [
        'src/invoices/invoice.service.ts',
        'src/invoices/invoice.controller.ts',
        'src/invoices/pdf-renderer.ts',
      ],
      symbols: ['InvoiceService.finalize', 'renderInvoicePdf', 'computeLineTotals', 'InvoiceDto'],
      tests: ['invoice.service.spec.ts', 'pdf-renderer.spec.ts'],
      errors: [
        'QueryFailedError: duplicate key value violates unique constraint "invoices_number_key"',
        'RangeError: Invalid currency code : undefined',
      ],
      symptoms: [
        'totals are off by one cent when there are more than 3 line items',
        'finalized invoices can still be edited through the PATCH endpoint',
        'the PDF shows the tax rate of the previous invoice',
        'invoice numbers skip when two finalize calls race',
      ],
      features: ['credit notes', 'multi-currency invoices', 'a draft preview endpoint'],
      data: ['invoices table', 'invoice_lines table'],
      surface: ['POST /v1/invoices/:id/finalize', 'GET /v1/invoices?status=open'],
      perf: ['listing open invoices takes 4 seconds for big tenants'],
    },
    {
      name: 'webhooks',
      area: ['webhooks', 'the webhook handler', 'stripe webhooks'],
      alt: [
        'incoming events from the processor',
        'those callbacks',
        'the notifications we receive',
      ],
      files: [
        'src/webhooks/stripe-webhook.controller.ts',
        'src/webhooks/event-dispatcher.ts',
        'src/webhooks/signature.ts',
      ],
      symbols: ['verifyStripeSignature', 'EventDispatcher.dispatch', 'handlePaymentSucceeded'],
      tests: ['stripe-webhook.controller.spec.ts', 'event-dispatcher.spec.ts'],
      errors: [
        'StripeSignatureVerificationError: No signatures found matching the expected signature for payload',
        'Error: Unhandled event type charge.dispute.created',
      ],
      symptoms: [
        'the same payment_intent.succeeded event gets processed twice',
        'we return 500 to stripe on unknown event types so they keep retrying',
        'signature verification fails because the body is already parsed as JSON',
      ],
      features: [
        'dead-lettering of webhook events we cannot handle',
        'a replay endpoint for missed events',
      ],
      data: ['webhook_events table', 'processed_event_ids set in redis'],
      surface: ['POST /webhooks/stripe'],
      perf: ['webhook handling blocks the event loop while rendering receipts'],
    },
    {
      name: 'ledger',
      area: ['the ledger', 'ledger balances', 'ledger entries'],
      alt: ['accounting', 'the money bookkeeping', 'debits and credits'],
      files: [
        'src/ledger/ledger.service.ts',
        'src/ledger/journal.repository.ts',
        'src/ledger/money.ts',
      ],
      symbols: ['LedgerService.post', 'JournalRepository.append', 'Money.add', 'balanceAt'],
      tests: ['ledger.service.spec.ts', 'money.spec.ts'],
      errors: [
        'Error: Ledger imbalance: debits 10450 != credits 10400 for journal j_8f2a',
        'QueryFailedError: could not serialize access due to concurrent update',
      ],
      symptoms: [
        'balances drift when refunds and payouts land in the same second',
        'Money.add silently mixes EUR and USD amounts',
        'balanceAt ignores entries posted exactly at midnight',
      ],
      features: ['a daily reconciliation job', 'reversal entries instead of deletes'],
      data: ['journal_entries table', 'accounts table'],
      surface: ['GET /v1/accounts/:id/balance'],
      perf: ['balanceAt sums every entry since the beginning of time'],
    },
    {
      name: 'notifications',
      area: ['notifications', 'the email sender', 'notification templates'],
      alt: ['the messages customers receive', 'receipts in the inbox', 'mail'],
      files: [
        'src/notifications/email.service.ts',
        'src/notifications/templates/receipt.hbs',
        'src/notifications/outbox.processor.ts',
      ],
      symbols: ['EmailService.send', 'OutboxProcessor.drain', 'renderTemplate'],
      tests: ['email.service.spec.ts', 'outbox.processor.spec.ts'],
      errors: ['Error: Missing helper: "formatCurrency"', 'SMTP 421 4.7.0 Try again later'],
      symptoms: [
        'receipts go out twice when the outbox processor restarts',
        'the receipt template shows the amount in cents',
        'emails to addresses with a plus sign bounce',
      ],
      features: ['per-tenant email branding', 'a digest instead of one email per payment'],
      data: ['outbox table', 'email_templates table'],
      surface: ['POST /v1/notifications/test'],
      perf: ['the outbox drain holds a transaction open for the whole batch'],
    },
  ],
};

const ATLAS_WEB: RepoVocab = {
  name: 'atlas-web',
  tenantId: 'tenant-northwind',
  language: 'typescript',
  users: ['u-lena.fischer', 'u-omar.haddad', 'u-maria.santos'],
  testCmd: 'pnpm test',
  buildCmd: 'pnpm build',
  lintCmd: 'pnpm lint',
  lockfile: 'pnpm-lock.yaml',
  deps: [
    { name: 'react', from: '18.2.0', to: '19.1.0' },
    { name: 'next', from: '14.1.4', to: '15.2.3' },
    { name: '@tanstack/react-query', from: '4.36.1', to: '5.62.0' },
    { name: 'tailwindcss', from: '3.4.1', to: '4.0.6' },
    { name: 'vite', from: '5.1.6', to: '6.2.0' },
    { name: 'storybook', from: '7.6.17', to: '8.5.3' },
  ],
  ciJobs: ['vitest', 'playwright', 'lint', 'bundle-size', 'chromatic'],
  buildErrors: [
    "Type error: Property 'onSelect' does not exist on type 'IntrinsicAttributes & ComboboxProps'.",
    'Error: Hydration failed because the initial UI does not match what was rendered on the server.',
    'bundle-size: app/checkout chunk is 412 kB, limit is 350 kB',
    'playwright: 3 failed\n  checkout.spec.ts:58:5 › pays with a saved card',
  ],
  envs: ['preview', 'staging', 'production'],
  envErrors: [
    'Error: listen EADDRINUSE: address already in use :::5173',
    'ENOENT: no such file or directory, open .env.local',
  ],
  services: ['the mock API server', 'storybook', 'the dev server'],
  secrets: ['NEXT_PUBLIC_SEGMENT_KEY', 'SENTRY_AUTH_TOKEN'],
  designTopics: [
    'moving from redux to react-query for server state',
    'a design token pipeline shared with the mobile app',
    'server components for the dashboard',
    'how we do feature flags on the client',
  ],
  docs: ['README.md', 'docs/components.md', 'CONTRIBUTING.md'],
  excludeFamilies: ['data-migration'],
  modules: [
    {
      name: 'checkout',
      area: ['checkout', 'the checkout flow', 'the payment form'],
      alt: ['buying', 'when people pay', 'the purchase steps', 'cart to confirmation'],
      files: [
        'app/checkout/page.tsx',
        'app/checkout/components/PaymentForm.tsx',
        'app/checkout/hooks/useCheckoutSession.ts',
      ],
      symbols: ['PaymentForm', 'useCheckoutSession', 'validateCardFields', 'CheckoutSummary'],
      tests: ['PaymentForm.test.tsx', 'checkout.spec.ts'],
      errors: [
        "TypeError: Cannot read properties of null (reading 'clientSecret')\n    at useCheckoutSession (useCheckoutSession.ts:27:31)",
        'Warning: Maximum update depth exceeded. This can happen when a component calls setState inside useEffect',
      ],
      symptoms: [
        'the pay button stays disabled after fixing a card error',
        'the summary shows the old total after applying a coupon',
        'double clicking pay creates two payment intents',
        'the address form loses input when switching tabs on mobile safari',
      ],
      features: ['apple pay', 'saved addresses', 'a guest checkout option'],
      data: ['cart state in localStorage', 'checkoutSession query cache'],
      surface: ['/checkout', '/checkout/confirm'],
      perf: ['the checkout page ships the whole card brand icon set'],
    },
    {
      name: 'dashboard',
      area: ['the dashboard', 'dashboard charts', 'the overview page'],
      alt: ['the home screen after login', 'those graphs', 'the metrics view'],
      files: [
        'app/dashboard/page.tsx',
        'app/dashboard/RevenueChart.tsx',
        'app/dashboard/useMetrics.ts',
      ],
      symbols: ['RevenueChart', 'useMetrics', 'bucketByWeek', 'DashboardGrid'],
      tests: ['RevenueChart.test.tsx', 'bucketByWeek.test.ts'],
      errors: ['RangeError: Invalid time value\n    at bucketByWeek (bucketByWeek.ts:14:22)'],
      symptoms: [
        'the revenue chart is empty for tenants in UTC+13',
        'the date range picker resets when you switch tabs',
        'weeks start on sunday even for german users',
      ],
      features: ['a CSV export of the chart data', 'comparison with the previous period'],
      data: ['metrics query keys', 'dashboard layout in user prefs'],
      surface: ['/dashboard', '/dashboard?range=90d'],
      perf: ['the dashboard re-renders every chart on each keystroke in the search box'],
    },
    {
      name: 'settings',
      area: ['settings', 'the settings page', 'account settings'],
      alt: ['preferences', 'where people change their profile', 'the profile screen'],
      files: [
        'app/settings/page.tsx',
        'app/settings/TeamMembers.tsx',
        'app/settings/api/updateProfile.ts',
      ],
      symbols: ['TeamMembers', 'updateProfile', 'InviteDialog', 'useSettingsForm'],
      tests: ['TeamMembers.test.tsx', 'updateProfile.test.ts'],
      errors: ['Error: 422 Unprocessable Entity: email must be a valid address'],
      symptoms: [
        'removing a team member does not update the list until reload',
        'the invite dialog accepts an empty email',
        'changing the timezone saves but shows the old value',
      ],
      features: ['two-factor setup', 'role management for team members'],
      data: ['user prefs', 'team members query'],
      surface: ['/settings/team', '/settings/profile'],
      perf: ['the team list loads every member avatar at full size'],
    },
    {
      name: 'search',
      area: ['search', 'the search box', 'global search'],
      alt: ['finding things', 'the command palette', 'lookup'],
      files: ['app/search/SearchBox.tsx', 'app/search/useSearch.ts', 'lib/highlight.ts'],
      symbols: ['SearchBox', 'useSearch', 'highlightMatches', 'debounce'],
      tests: ['SearchBox.test.tsx', 'highlight.test.ts'],
      errors: [
        'SyntaxError: Invalid regular expression: /(/: Unterminated group\n    at highlightMatches',
      ],
      symptoms: [
        'typing a parenthesis crashes the search box',
        'results from the previous query flash before the new ones',
        'search ignores accents so josé does not match jose',
      ],
      features: ['keyboard navigation in results', 'recent searches'],
      data: ['search query cache', 'recent searches in localStorage'],
      surface: ['/search?q=', 'cmd+k'],
      perf: ['every keystroke fires a request, the debounce is not applied'],
    },
    {
      name: 'design-system',
      area: ['the design system', 'the Button component', 'our component library'],
      alt: ['UI kit', 'shared widgets', 'primitives everyone uses'],
      files: [
        'packages/ui/src/Button.tsx',
        'packages/ui/src/Combobox.tsx',
        'packages/ui/src/tokens.css',
      ],
      symbols: ['Button', 'Combobox', 'useFocusRing', 'ThemeProvider'],
      tests: ['Button.test.tsx', 'Combobox.test.tsx'],
      errors: [
        'Warning: Function components cannot be given refs. Did you mean to use React.forwardRef()?',
      ],
      symptoms: [
        'the Combobox closes when you click its scrollbar',
        'focus rings are invisible in dark mode',
        'Button loses its ref so tooltips cannot anchor to it',
      ],
      features: ['a Toast component', 'dark mode tokens'],
      data: ['design tokens', 'storybook stories'],
      surface: ['storybook', 'packages/ui'],
      perf: ['importing one icon pulls the whole icon package'],
    },
  ],
};

const TIDEWATER: RepoVocab = {
  name: 'tidewater',
  tenantId: 'tenant-bluefin',
  language: 'rust',
  users: ['u-ana.moreau', 'u-jonas.berg', 'u-sam.okafor'],
  testCmd: 'cargo test',
  buildCmd: 'cargo build --release',
  lintCmd: 'cargo clippy -- -D warnings',
  lockfile: 'Cargo.lock',
  deps: [
    { name: 'tokio', from: '1.36.0', to: '1.43.0' },
    { name: 'rusqlite', from: '0.30.0', to: '0.33.0' },
    { name: 'clap', from: '4.4.18', to: '4.5.27' },
    { name: 'serde_json', from: '1.0.113', to: '1.0.138' },
    { name: 'prost', from: '0.12.3', to: '0.13.4' },
  ],
  ciJobs: ['cargo-test', 'clippy', 'miri', 'fuzz-smoke', 'release-build'],
  buildErrors: [
    'error[E0502]: cannot borrow `self.index` as mutable because it is also borrowed as immutable\n  --> src/wal/segment.rs:144:9',
    'error: unused variable: `offset`\n  --> src/compaction/merge.rs:77:13\n  = note: `-D unused-variables` implied by `-D warnings`',
    'error[E0599]: no method named `block_on` found for struct `Runtime` in the current scope',
    'linking with `cc` failed: exit status: 1\n  = note: /usr/bin/ld: cannot find -lzstd',
  ],
  envs: ['bench', 'staging', 'prod-eu'],
  envErrors: [
    'error: could not find `Cargo.toml` in `/work` or any parent directory',
    'Too many open files (os error 24)',
  ],
  services: ['the local three-node cluster', 'minio'],
  secrets: ['S3_SECRET_ACCESS_KEY', 'CLUSTER_TLS_KEY'],
  designTopics: [
    'switching the WAL to fixed-size segments',
    'whether compaction should run in its own thread pool',
    'a pluggable storage trait so we can test without disk',
    'leader leases versus raft read-index for reads',
  ],
  docs: ['README.md', 'docs/format.md', 'docs/adr/'],
  modules: [
    {
      name: 'wal',
      area: ['the WAL', 'write-ahead log', 'wal segments'],
      alt: ['durability', 'what we fsync before acking', 'crash recovery'],
      files: ['src/wal/segment.rs', 'src/wal/writer.rs', 'src/wal/recovery.rs'],
      symbols: ['SegmentWriter::append', 'Wal::recover', 'Checksum', 'fsync_batch'],
      tests: ['wal::tests::recover_after_torn_write', 'wal::tests::append_rotates_segment'],
      errors: [
        "thread 'wal::tests::recover_after_torn_write' panicked at src/wal/recovery.rs:212:37:\ncalled `Option::unwrap()` on a `None` value",
        'Error: checksum mismatch at offset 4096 in segment 00000017.wal',
      ],
      symptoms: [
        'recovery stops at the first torn record instead of truncating it',
        'segments never rotate when writes are smaller than 512 bytes',
        'fsync_batch acks before the data is on disk',
      ],
      features: ['segment preallocation', 'a wal dump subcommand'],
      data: ['segment headers', 'the checkpoint file'],
      surface: ['tidewater wal dump', 'tidewater recover'],
      perf: ['append does one syscall per record'],
    },
    {
      name: 'compaction',
      area: ['compaction', 'the compactor', 'sstable merging'],
      alt: ['cleanup of old files', 'space reclamation', 'background rewriting'],
      files: ['src/compaction/merge.rs', 'src/compaction/picker.rs', 'src/compaction/mod.rs'],
      symbols: ['MergeIterator::next', 'LevelPicker::pick', 'Compactor::run'],
      tests: [
        'compaction::tests::tombstones_are_dropped',
        'compaction::tests::picker_prefers_overlap',
      ],
      errors: ['Error: key out of order: b"user:0042" after b"user:0100"'],
      symptoms: [
        'tombstones come back after compaction',
        'the picker keeps choosing the same level-0 files',
        'compaction deadlocks when a flush happens at the same time',
      ],
      features: ['rate limiting for compaction IO', 'a manual compact subcommand'],
      data: ['sstable manifests', 'level metadata'],
      surface: ['tidewater compact --level 0'],
      perf: ['MergeIterator clones every key'],
    },
    {
      name: 'query-planner',
      area: ['the query planner', 'query planning', 'the planner'],
      alt: ['how we decide which index to use', 'explain output', 'execution strategy'],
      files: ['src/query/planner.rs', 'src/query/cost.rs', 'src/query/ast.rs'],
      symbols: ['Planner::plan', 'estimate_cost', 'Expr::simplify', 'IndexScan'],
      tests: ['query::tests::prefers_index_for_equality', 'query::tests::simplify_not_not'],
      errors: ["thread 'main' panicked at src/query/cost.rs:88:21:\nattempt to divide by zero"],
      symptoms: [
        'a range query on an empty table panics in the cost model',
        'the planner picks a full scan even when there is an index',
        'NOT NOT x is not simplified',
      ],
      features: ['an EXPLAIN ANALYZE mode', 'index-only scans'],
      data: ['table statistics', 'index catalog'],
      surface: ['tidewater query', 'EXPLAIN'],
      perf: ['planning takes longer than execution for simple lookups'],
    },
    {
      name: 'cli',
      area: ['the CLI', 'command line flags', 'the clap config'],
      alt: ['the terminal tool', 'what users type', 'the binary'],
      files: ['src/bin/tidewater.rs', 'src/cli/args.rs', 'src/cli/output.rs'],
      symbols: ['Args', 'Command::Import', 'print_table', 'parse_duration'],
      tests: ['cli::tests::parse_duration_suffixes', 'tests/cli_import.rs'],
      errors: [
        "error: unexpected argument '--format' found\n\nUsage: tidewater export [OPTIONS] <TABLE>",
      ],
      symptoms: [
        'parse_duration accepts "10x" and treats it as 10 seconds',
        'the import command exits 0 even when rows fail',
        'table output breaks with unicode column names',
      ],
      features: ['a --json output flag', 'shell completions'],
      data: ['the config file', 'CLI history'],
      surface: ['tidewater import', 'tidewater export --format csv'],
      perf: ['the import command parses the whole file before writing anything'],
    },
    {
      name: 'replication',
      area: ['replication', 'the raft log', 'follower catch-up'],
      alt: ['keeping nodes in sync', 'the cluster copies', 'leader election'],
      files: [
        'src/replication/raft.rs',
        'src/replication/snapshot.rs',
        'src/replication/transport.rs',
      ],
      symbols: ['RaftNode::tick', 'install_snapshot', 'AppendEntries', 'Transport::send'],
      tests: [
        'replication::tests::follower_catches_up',
        'replication::tests::election_after_partition',
      ],
      errors: [
        'Error: term mismatch: local 7, remote 9',
        'Error: snapshot chunk 3 of 12 failed: connection reset by peer',
      ],
      symptoms: [
        'a follower that was down for an hour never catches up',
        'two leaders exist for a few seconds after a partition heals',
        'snapshots are resent from the first chunk after a timeout',
      ],
      features: ['learner nodes', 'snapshot compression'],
      data: ['raft log entries', 'snapshot metadata'],
      surface: ['tidewater cluster status'],
      perf: ['AppendEntries sends one entry per RPC'],
    },
  ],
};

const HARVEST_ETL: RepoVocab = {
  name: 'harvest-etl',
  tenantId: 'tenant-bluefin',
  language: 'python',
  users: ['u-priya.nair', 'u-tom.walsh', 'u-sam.okafor'],
  testCmd: 'pytest',
  buildCmd: 'make build',
  lintCmd: 'ruff check .',
  lockfile: 'poetry.lock',
  deps: [
    { name: 'pandas', from: '1.5.3', to: '2.2.3' },
    { name: 'sqlalchemy', from: '1.4.51', to: '2.0.36' },
    { name: 'pydantic', from: '1.10.14', to: '2.10.4' },
    { name: 'apache-airflow', from: '2.7.3', to: '2.10.4' },
    { name: 'boto3', from: '1.28.85', to: '1.35.90' },
  ],
  ciJobs: ['pytest', 'ruff', 'mypy', 'dbt-compile', 'docker-image'],
  buildErrors: [
    'mypy: harvest/transforms/normalize.py:52: error: Incompatible return value type (got "Optional[DataFrame]", expected "DataFrame")',
    'ERROR: Could not find a version that satisfies the requirement pyarrow==12.0.0',
    'ruff: F401 `typing.Any` imported but unused (12 more)',
    'Compilation Error in model stg_orders (models/staging/stg_orders.sql)',
  ],
  envs: ['dev', 'staging', 'prod'],
  envErrors: [
    'psycopg2.OperationalError: could not connect to server: Connection refused',
    "ModuleNotFoundError: No module named 'harvest'",
  ],
  services: ['the local airflow', 'postgres', 'localstack'],
  secrets: ['WAREHOUSE_PASSWORD', 'AWS_SECRET_ACCESS_KEY'],
  designTopics: [
    'moving from daily batches to incremental loads',
    'data contracts between ingest and the warehouse',
    'replacing airflow sensors with event triggers',
    'where deduplication should happen',
  ],
  docs: ['README.md', 'docs/pipelines.md', 'docs/data-dictionary.md'],
  modules: [
    {
      name: 'ingest',
      area: ['ingest', 'the S3 ingest job', 'raw file ingestion'],
      alt: ['pulling vendor drops', 'the bucket reader', 'uploads landing'],
      files: [
        'harvest/ingest/s3_reader.py',
        'harvest/ingest/manifest.py',
        'harvest/ingest/schemas.py',
      ],
      symbols: ['read_manifest', 'S3Reader.iter_objects', 'parse_vendor_csv', 'RawRecord'],
      tests: [
        'tests/ingest/test_s3_reader.py::test_skips_empty_files',
        'tests/ingest/test_manifest.py',
      ],
      errors: [
        "KeyError: 'customer_id'",
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 1042",
      ],
      symptoms: [
        'files with a BOM lose their first column name',
        "the job reprocesses yesterday's files after a restart",
        'empty vendor files crash the whole run',
      ],
      features: ['parquet input support', 'quarantine for malformed files'],
      data: ['raw.vendor_orders', 'the ingest manifest table'],
      surface: ['ingest_vendor_files DAG'],
      perf: ['S3Reader lists the whole bucket on every run'],
    },
    {
      name: 'transforms',
      area: ['the transforms', 'normalize step', 'order transforms'],
      alt: ['cleaning the data', 'the reshaping logic', 'turning raw rows into something usable'],
      files: [
        'harvest/transforms/normalize.py',
        'harvest/transforms/currency.py',
        'harvest/transforms/dedupe.py',
      ],
      symbols: ['normalize_orders', 'convert_currency', 'dedupe_by_key', 'OrderFrame'],
      tests: [
        'tests/transforms/test_normalize.py::test_handles_missing_country',
        'tests/transforms/test_dedupe.py',
      ],
      errors: [
        "TypeError: 'NoneType' object is not subscriptable",
        'ValueError: cannot reindex on an axis with duplicate labels',
      ],
      symptoms: [
        'currency conversion uses the rate from the wrong day',
        'dedupe_by_key keeps the oldest row instead of the newest',
        'orders without a country get dropped silently',
      ],
      features: ['a refunds transform', 'column-level lineage tags'],
      data: ['staging.orders', 'fx_rates table'],
      surface: ['transform_orders task'],
      perf: ['normalize_orders uses apply row by row on 20M rows'],
    },
    {
      name: 'scheduler',
      area: ['the DAGs', 'airflow scheduling', 'the scheduler config'],
      alt: ['when jobs run', 'the nightly timing', 'orchestration'],
      files: ['dags/nightly_orders.py', 'dags/common/defaults.py', 'harvest/scheduler/sla.py'],
      symbols: ['default_args', 'check_sla', 'nightly_orders_dag', 'ExternalTaskSensor'],
      tests: ['tests/dags/test_dag_integrity.py', 'tests/scheduler/test_sla.py'],
      errors: [
        'airflow.exceptions.AirflowSensorTimeout: Sensor has timed out; run duration of 21600 seconds',
      ],
      symptoms: [
        'the nightly DAG runs twice on DST change',
        'sensors hold worker slots for six hours',
        'SLA misses never send the slack alert',
      ],
      features: ['backfill by date range from the UI', 'per-DAG retry policies'],
      data: ['dag_run table', 'the SLA config'],
      surface: ['nightly_orders DAG', 'airflow UI'],
      perf: ['DAG parsing takes 40 seconds because of top-level imports'],
    },
    {
      name: 'warehouse-loader',
      area: ['the warehouse loader', 'loading into snowflake', 'the COPY step'],
      alt: ['getting data into analytics', 'the final write', 'the reporting tables'],
      files: ['harvest/load/warehouse.py', 'harvest/load/merge_sql.py', 'harvest/load/stage.py'],
      symbols: ['WarehouseLoader.merge', 'build_merge_sql', 'stage_to_s3'],
      tests: [
        'tests/load/test_merge_sql.py::test_quotes_reserved_words',
        'tests/load/test_warehouse.py',
      ],
      errors: [
        "snowflake.connector.errors.ProgrammingError: 100038 (22018): Numeric value 'N/A' is not recognized",
      ],
      symptoms: [
        'MERGE duplicates rows when the key has nulls',
        'column names that are reserved words break the generated SQL',
        'failed loads leave staged files behind forever',
      ],
      features: ['schema evolution for new columns', 'load metrics to datadog'],
      data: ['analytics.fct_orders', 'the stage bucket'],
      surface: ['load_orders task'],
      perf: ['we load one file per COPY statement'],
    },
    {
      name: 'quality-checks',
      area: ['data quality checks', 'the great expectations suite', 'row count checks'],
      alt: ['validation', 'making sure numbers look sane', 'the alarms on bad data'],
      files: [
        'harvest/quality/expectations.py',
        'harvest/quality/row_counts.py',
        'quality/suites/orders.json',
      ],
      symbols: ['run_suite', 'compare_row_counts', 'ExpectationResult'],
      tests: ['tests/quality/test_row_counts.py', 'tests/quality/test_expectations.py'],
      errors: ['AssertionError: expected 1042331 rows in fct_orders, got 998120 (-4.2%)'],
      symptoms: [
        'row count check fails every monday because of the weekend dip',
        'a failed expectation does not stop the downstream load',
        'the null check ignores empty strings',
      ],
      features: ['freshness checks per table', 'a weekly quality report'],
      data: ['quality_results table', 'expectation suites'],
      surface: ['quality_gate task'],
      perf: ['run_suite loads the whole table into pandas'],
    },
  ],
};

const FLEET_OPS: RepoVocab = {
  name: 'fleet-ops',
  tenantId: 'tenant-bluefin',
  language: 'go',
  users: ['u-jonas.berg', 'u-rita.costa', 'u-dev.patel'],
  testCmd: 'go test ./...',
  buildCmd: 'make build',
  lintCmd: 'golangci-lint run',
  lockfile: 'go.sum',
  deps: [
    { name: 'github.com/jackc/pgx/v5', from: 'v5.4.3', to: 'v5.7.2' },
    { name: 'google.golang.org/grpc', from: 'v1.59.0', to: 'v1.69.2' },
    { name: 'github.com/redis/go-redis/v9', from: 'v9.2.1', to: 'v9.7.0' },
    { name: 'go.opentelemetry.io/otel', from: 'v1.19.0', to: 'v1.33.0' },
  ],
  ciJobs: ['go-test', 'golangci-lint', 'integration', 'terraform-plan', 'image-build'],
  buildErrors: [
    'internal/dispatch/assign.go:118:6: declared and not used: eta',
    'go: updates to go.mod needed; to update it:\n\tgo mod tidy',
    'Error: Error acquiring the state lock\nLock Info: ID: 4f1c…  Operation: OperationTypePlan',
    'ineffassign: internal/geo/route.go:64:3: ineffectual assignment to err',
  ],
  envs: ['staging', 'prod-us-east', 'prod-eu-west'],
  envErrors: [
    'dial tcp 127.0.0.1:6379: connect: connection refused',
    'kind: cluster already exists',
  ],
  services: ['redis', 'the kind cluster', 'postgres'],
  secrets: ['MAPS_API_KEY', 'DB_PASSWORD', 'GRPC_TLS_CERT'],
  designTopics: [
    'moving driver locations from postgres to redis streams',
    'per-region deployments versus one global cluster',
    'how retries should work between dispatcher and tracking',
    'grpc versus plain HTTP for the mobile clients',
  ],
  docs: ['README.md', 'docs/runbooks/dispatch.md', 'docs/adr/'],
  modules: [
    {
      name: 'dispatcher',
      area: ['the dispatcher', 'job assignment', 'dispatch'],
      alt: ['matching drivers to orders', 'who gets which delivery', 'allocation'],
      files: [
        'internal/dispatch/assign.go',
        'internal/dispatch/queue.go',
        'internal/dispatch/scoring.go',
      ],
      symbols: ['Assigner.Assign', 'ScoreCandidate', 'PendingQueue.Pop', 'AssignmentRequest'],
      tests: ['TestAssignPrefersClosestDriver', 'TestQueuePopEmpty'],
      errors: [
        'panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV] goroutine 84 [running]:\ninternal/dispatch.(*Assigner).Assign',
      ],
      symptoms: [
        'the same job gets assigned to two drivers',
        'drivers marked offline still get assignments',
        'ScoreCandidate ignores the vehicle size',
      ],
      features: ['batch assignment every 5 seconds', 'manual override from the ops console'],
      data: ['assignments table', 'pending jobs queue'],
      surface: ['POST /v2/jobs/assign', 'the ops console'],
      perf: ['Assign scans every driver in the city'],
    },
    {
      name: 'tracking',
      area: ['tracking', 'location updates', 'the tracking service'],
      alt: ['where the trucks are', 'GPS pings', 'the live map'],
      files: [
        'internal/tracking/ingest.go',
        'internal/tracking/store.go',
        'internal/tracking/stream.go',
      ],
      symbols: ['LocationStore.Put', 'IngestHandler', 'StreamUpdates', 'Ping'],
      tests: ['TestIngestDropsStalePings', 'TestStreamUpdatesClosesOnCancel'],
      errors: [
        'context deadline exceeded',
        'rpc error: code = ResourceExhausted desc = grpc: received message larger than max',
      ],
      symptoms: [
        'stale pings overwrite newer positions',
        'StreamUpdates leaks a goroutine per disconnected client',
        'locations jump to 0,0 when the phone has no fix',
      ],
      features: ['geofence enter/exit events', "a replay of a driver's day"],
      data: ['driver_locations table', 'locations redis stream'],
      surface: ['grpc TrackingService.Stream', 'POST /v2/pings'],
      perf: ['each ping is its own database transaction'],
    },
    {
      name: 'geo',
      area: ['geo', 'route calculation', 'the ETA code'],
      alt: ['arrival times', 'distance math', 'maps stuff'],
      files: ['internal/geo/route.go', 'internal/geo/haversine.go', 'internal/geo/eta.go'],
      symbols: ['EstimateETA', 'Haversine', 'RouteCache.Get', 'Polyline'],
      tests: ['TestHaversineAntimeridian', 'TestEstimateETARushHour'],
      errors: ['maps api: 429 Too Many Requests'],
      symptoms: [
        'ETAs are way off across the antimeridian',
        'the route cache never expires entries',
        'EstimateETA ignores the traffic multiplier at night',
      ],
      features: ['a fallback when the maps API is down', 'toll avoidance'],
      data: ['route cache', 'traffic multipliers config'],
      surface: ['GET /v2/eta'],
      perf: ['we call the maps API for every candidate driver'],
    },
    {
      name: 'gateway',
      area: ['the API gateway', 'the http gateway', 'middleware chain'],
      alt: ['the front door', 'what the apps talk to', 'edge routing'],
      files: [
        'cmd/gateway/main.go',
        'internal/gateway/middleware.go',
        'internal/gateway/ratelimit.go',
      ],
      symbols: ['RateLimiter.Allow', 'withRequestID', 'NewRouter', 'authMiddleware'],
      tests: ['TestRateLimiterBurst', 'TestRequestIDPropagates'],
      errors: ['http: superfluous response.WriteHeader call from internal/gateway.withRequestID'],
      symptoms: [
        'request ids are not propagated to the grpc calls',
        'the rate limiter resets on every deploy',
        'CORS preflight returns 404',
      ],
      features: ['per-client rate limits', 'request logging with sampling'],
      data: ['rate limit buckets in redis'],
      surface: ['api.fleet.example/v2'],
      perf: ['every request parses the JWT twice'],
    },
    {
      name: 'terraform',
      area: ['the terraform', 'infra config', 'the k8s manifests'],
      alt: ['cloud resources', 'the cluster setup', 'what runs where'],
      files: ['infra/terraform/main.tf', 'infra/terraform/rds.tf', 'deploy/k8s/dispatcher.yaml'],
      symbols: ['module.rds', 'aws_iam_role.dispatcher', 'HorizontalPodAutoscaler'],
      tests: ['terraform validate', 'kubeconform deploy/k8s'],
      errors: [
        'Error: creating RDS DB Instance: InvalidParameterCombination: Cannot upgrade postgres from 14.10 to 16.1',
      ],
      symptoms: [
        'the HPA never scales down below 6 pods',
        'terraform plan wants to recreate the database',
        'the dispatcher pod gets OOMKilled at 512Mi',
      ],
      features: ['a staging copy of prod-eu', 'pod disruption budgets'],
      data: ['terraform state', 'helm values'],
      surface: ['terraform plan', 'kubectl rollout'],
      perf: ['terraform plan takes 9 minutes'],
    },
  ],
};

const MOBILE_COMPANION: RepoVocab = {
  name: 'mobile-companion',
  tenantId: 'tenant-northwind',
  language: 'kotlin',
  users: ['u-omar.haddad', 'u-kim.nguyen'],
  testCmd: './gradlew test',
  buildCmd: './gradlew assembleDebug',
  lintCmd: './gradlew ktlintCheck detekt',
  lockfile: 'gradle/libs.versions.toml',
  deps: [
    { name: 'kotlinx-coroutines', from: '1.7.3', to: '1.10.1' },
    { name: 'retrofit', from: '2.9.0', to: '2.11.0' },
    { name: 'room', from: '2.5.2', to: '2.6.1' },
    { name: 'compose-bom', from: '2023.10.01', to: '2025.01.00' },
  ],
  ciJobs: ['unit-tests', 'lint', 'detekt', 'instrumented-tests', 'bundle-release'],
  buildErrors: [
    'e: file:///app/src/main/java/com/northwind/sync/SyncWorker.kt:61:25 Unresolved reference: setForegroundAsync',
    "Execution failed for task ':app:kaptDebugKotlin'.\n> A failure occurred while executing org.jetbrains.kotlin.gradle.internal.KaptWithoutKotlincTask$KaptExecutionWorkAction",
    'Duplicate class kotlin.collections.jdk8.CollectionsJDK8Kt found in modules kotlin-stdlib-1.8.22',
  ],
  envs: ['internal', 'beta', 'production'],
  envErrors: [
    'SDK location not found. Define a valid SDK location with an ANDROID_HOME environment variable',
    'adb: device offline',
  ],
  services: ['the emulator', 'the mock backend'],
  secrets: ['the upload keystore password', 'MAPS_API_KEY'],
  designTopics: [
    'offline-first sync with conflict resolution',
    'moving navigation to compose navigation',
    'how much to cache on the device',
  ],
  docs: ['README.md', 'docs/release.md'],
  modules: [
    {
      name: 'onboarding',
      area: ['onboarding', 'the signup screens', 'the onboarding flow'],
      alt: ['first launch', 'new user welcome', 'account creation'],
      files: [
        'app/src/main/java/com/northwind/onboarding/OnboardingViewModel.kt',
        'app/src/main/java/com/northwind/onboarding/WelcomeScreen.kt',
      ],
      symbols: ['OnboardingViewModel', 'WelcomeScreen', 'submitSignup'],
      tests: ['OnboardingViewModelTest', 'WelcomeScreenTest'],
      errors: [
        'java.lang.IllegalStateException: Fragment OnboardingFragment not attached to a context',
      ],
      symptoms: [
        'rotating the phone on step 2 sends you back to step 1',
        'the continue button is hidden behind the keyboard',
        'submitSignup fires twice on slow networks',
      ],
      features: ['sign in with google', 'a skip button for the tour'],
      data: ['onboarding state in DataStore'],
      surface: ['WelcomeScreen', 'the signup form'],
      perf: ['the welcome animation drops frames on older devices'],
    },
    {
      name: 'sync',
      area: ['sync', 'the SyncWorker', 'background sync'],
      alt: ['keeping the phone up to date', 'uploading changes', 'data refresh'],
      files: [
        'app/src/main/java/com/northwind/sync/SyncWorker.kt',
        'app/src/main/java/com/northwind/sync/ConflictResolver.kt',
      ],
      symbols: ['SyncWorker.doWork', 'ConflictResolver.resolve', 'SyncState'],
      tests: ['SyncWorkerTest', 'ConflictResolverTest'],
      errors: [
        'kotlinx.coroutines.JobCancellationException: Job was cancelled',
        'retrofit2.HttpException: HTTP 409 Conflict',
      ],
      symptoms: [
        'edits made offline are lost when the server has a newer version',
        'the worker retries forever on a 409',
        'sync drains the battery because it runs every minute',
      ],
      features: ['sync over wifi only setting', 'a manual refresh button'],
      data: ['the pending_changes room table', 'sync cursor'],
      surface: ['pull to refresh', 'the sync status banner'],
      perf: ['doWork loads the whole table into memory'],
    },
    {
      name: 'offline-cache',
      area: ['the offline cache', 'room cache', 'cached images'],
      alt: ['stuff stored on the device', 'when there is no signal', 'disk usage'],
      files: [
        'app/src/main/java/com/northwind/cache/CacheRepository.kt',
        'app/src/main/java/com/northwind/cache/ImageCache.kt',
      ],
      symbols: ['CacheRepository.get', 'ImageCache.evict', 'CachePolicy'],
      tests: ['CacheRepositoryTest', 'ImageCacheTest'],
      errors: ['android.database.sqlite.SQLiteFullException: database or disk is full (code 13)'],
      symptoms: [
        'the image cache grows without limit',
        'stale prices show after coming back online',
        'evict removes entries that are still on screen',
      ],
      features: ['a cache size setting', 'prefetching the next page'],
      data: ['cache_entries table', 'image files dir'],
      surface: ['settings > storage'],
      perf: ['CacheRepository.get does disk IO on the main thread'],
    },
    {
      name: 'push',
      area: ['push notifications', 'FCM handling', 'the notification service'],
      alt: ['alerts on the lock screen', 'the buzz when something happens', 'pings to the phone'],
      files: [
        'app/src/main/java/com/northwind/push/PushService.kt',
        'app/src/main/java/com/northwind/push/NotificationBuilder.kt',
      ],
      symbols: ['PushService.onMessageReceived', 'NotificationBuilder.build', 'registerToken'],
      tests: ['PushServiceTest', 'NotificationBuilderTest'],
      errors: ['java.lang.SecurityException: Permission Denial: not allowed to post notifications'],
      symptoms: [
        'notifications do not show on android 13 because we never ask for the permission',
        'tapping a notification opens the home screen instead of the order',
        'registerToken is never called after reinstall',
      ],
      features: ['notification channels per type', 'quiet hours'],
      data: ['device tokens'],
      surface: ['the notification tray'],
      perf: ['building a notification downloads the full-size image'],
    },
    {
      name: 'camera',
      area: ['the camera screen', 'photo capture', 'CameraX code'],
      alt: ['taking pictures', 'scanning receipts', 'the shutter'],
      files: [
        'app/src/main/java/com/northwind/camera/CaptureScreen.kt',
        'app/src/main/java/com/northwind/camera/ImageCompressor.kt',
      ],
      symbols: ['CaptureScreen', 'ImageCompressor.compress', 'bindCameraUseCases'],
      tests: ['ImageCompressorTest'],
      errors: ['java.lang.IllegalArgumentException: No available camera can be found'],
      symptoms: [
        'photos come out rotated on samsung devices',
        'the preview is black after returning from the gallery',
        'compress produces 8 MB files',
      ],
      features: ['receipt edge detection', 'flash toggle'],
      data: ['captured images dir'],
      surface: ['CaptureScreen'],
      perf: ['compress runs on the main thread'],
    },
  ],
};

export const REPOS: readonly RepoVocab[] = [
  PAYMENTS_API,
  ATLAS_WEB,
  TIDEWATER,
  HARVEST_ETL,
  FLEET_OPS,
  MOBILE_COMPANION,
];

export const AGENTS: readonly string[] = ['claude-code', 'claude-code', 'codex-cli', 'aider'];
