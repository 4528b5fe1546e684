import { describe, expect, it } from 'vitest';
import {
  classifySecretName,
  findSecrets,
  looksHighEntropy,
  looksLikeSecretValue,
  redactJson,
  redactJsonText,
  redactSecrets,
  type RedactionKind,
} from './index';

// Every secret below is assembled from harmless parts at run time, so this file holds nothing
// a secret scanner would flag, and none of them is a live credential.
const AWS_KEY_ID = 'AKIA' + 'Z7Q2'.repeat(4);
const AWS_SESSION_KEY_ID = 'ASIA' + 'M3K8'.repeat(4);
const AWS_SECRET = 'k9Xq/Vb3+Lm7Tz1R' + 'w8Yp2Ns5Jd4Hf6Gc' + '0Ua2Ee1Q';
const GITHUB_BODY = 'a1B2'.repeat(9);
const GITHUB_TOKEN = 'ghp_' + GITHUB_BODY;
const GITHUB_FINE_GRAINED = 'github_pat_' + 'A1b2C3d4E5'.repeat(2) + '_' + 'f6G7h8J9k0'.repeat(6);
const GITLAB_TOKEN = 'glpat-' + 'Xy7Zq2Wv9Lm4Np8Rt3Ks';
const SLACK_TOKEN = 'xoxb-' + '1234567890' + '12-' + '1234567890123-' + 'AbCdEfGh'.repeat(3);
const SLACK_WEBHOOK_PATH = 'T0ABCDEFG/B0HIJKLMN/' + 'aBcDeFgH'.repeat(3);
const STRIPE_LIVE = 'sk_' + 'live_' + '4eC39HqLyjWD'.repeat(2);
const STRIPE_RESTRICTED = 'rk_' + 'live_' + 'Qz81mNb7Vc6X'.repeat(2);
const STRIPE_TEST = 'sk_' + 'test_' + 'Tt51aB2cD3eF'.repeat(2);
const OPENAI_LEGACY = 'sk-' + 'T3Bl7bkFJ9x'.repeat(4) + 'Qw1R';
const OPENAI_PROJECT = 'sk-proj-' + 'Ab1Cd2Ef3Gh4Ij5Kl6Mn7'.repeat(3);
const ANTHROPIC_KEY = 'sk-ant-' + 'api03-' + 'Zx9Yw8Vu7Ts6Rq5Po4Nm3'.repeat(4) + '-AA';
const GOOGLE_KEY = 'AIza' + 'Sy' + 'B1c2D3e4F5'.repeat(3) + 'g6H';
const NPM_TOKEN = 'npm_' + 'Ab1Cd2Ef3Gh4'.repeat(3);
const VAULT_TOKEN = 'hvs.' + 'CAESIJx9Kq2Lm7Np4Rt6Vw8Yz0Ab3Cd5Ef';
const JWT = [
  Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url'),
  Buffer.from(JSON.stringify({ sub: 'u-42', name: 'Ada', iat: 1760000000 })).toString('base64url'),
  'q7Bx9Lm2Np4Rt6Vw8Yz0-Ab3Cd5Ef7Gh9Ij1Kl_3Mn5',
].join('.');
const PEM_LABEL = 'RSA ' + 'PRIVATE KEY';
const PEM_BODY = [
  'MIIEowIBAAKCAQEAq7Bx9Lm2Np4Rt6Vw8Yz0Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St',
  'Uv1Wx3Yz5Ab7Cd9Ef1Gh3Ij5Kl7Mn9Op1Qr3St5Uv7Wx9Yz1Ab3Cd5Ef7Gh9Ij1',
  'Kl3Mn5Op7Qr9St1Uv3Wx5Yz7Ab9Cd1Ef3Gh5Ij7Kl9Mn1Op3Qr5St7Uv9Wx1Yz3==',
].join('\n');
const PEM = `-----BEGIN ${PEM_LABEL}-----\n${PEM_BODY}\n-----END ${PEM_LABEL}-----`;

/** Redacts and checks that a second pass changes nothing. */
function redact(text: string): ReturnType<typeof redactSecrets> {
  const result = redactSecrets(text);
  const again = redactSecrets(result.text);
  expect(again.text).toBe(result.text);
  expect(again.findings).toEqual([]);
  return result;
}

/** The redacted pieces of the original text, with their kinds. */
function redactedPieces(text: string): Array<[RedactionKind, string]> {
  return findSecrets(text).map((finding) => [finding.kind, text.slice(finding.start, finding.end)]);
}

describe('redactSecrets: token formats', () => {
  it.each<[RedactionKind, string]>([
    ['aws-access-key-id', AWS_KEY_ID],
    ['aws-access-key-id', AWS_SESSION_KEY_ID],
    ['github-token', GITHUB_TOKEN],
    ['github-token', 'gho_' + GITHUB_BODY],
    ['github-token', 'ghu_' + GITHUB_BODY],
    ['github-token', 'ghs_' + GITHUB_BODY],
    ['github-token', 'ghr_' + GITHUB_BODY],
    ['github-token', GITHUB_FINE_GRAINED],
    ['gitlab-token', GITLAB_TOKEN],
    ['slack-token', SLACK_TOKEN],
    ['slack-token', 'xoxp-' + '9876543210-' + 'ZyXwVuTs'.repeat(3)],
    ['stripe-key', STRIPE_LIVE],
    ['stripe-key', STRIPE_RESTRICTED],
    ['stripe-key', STRIPE_TEST],
    ['openai-key', OPENAI_LEGACY],
    ['openai-key', OPENAI_PROJECT],
    ['anthropic-key', ANTHROPIC_KEY],
    ['google-api-key', GOOGLE_KEY],
    ['npm-token', NPM_TOKEN],
    ['vault-token', VAULT_TOKEN],
    ['jwt', JWT],
    ['private-key', PEM],
  ])('should redact a %s and keep the sentence around it', (kind, secret) => {
    const text = `Use ${secret} for the deploy.`;
    const result = redact(text);
    expect(result.text).toBe(`Use [REDACTED:${kind}] for the deploy.`);
    expect(result.findings).toEqual([{ kind, start: 4, end: 4 + secret.length }]);
  });

  it('should redact the secret part of a Slack webhook URL only', () => {
    const url = `https://hooks.slack.com/services/${SLACK_WEBHOOK_PATH}`;
    expect(redact(`curl -X POST ${url} -d @msg.json`).text).toBe(
      'curl -X POST https://hooks.slack.com/services/[REDACTED:slack-webhook] -d @msg.json',
    );
  });

  it('should not take a token prefix inside a longer word for a token', () => {
    const text = `xAKIA${'Z7Q2'.repeat(4)} my${GITHUB_TOKEN} sk-learn-tutorial-notebook-2024`;
    expect(redact(text).findings).toEqual([]);
  });
});

describe('redactSecrets: realistic prompts and tool output', () => {
  it('should redact a .env dump and keep the ordinary settings', () => {
    const dump = [
      '$ cat .env',
      'NODE_ENV=production',
      'PORT=3000',
      'DATABASE_URL=postgres://app:Xk9#pQ2mL7@db.internal:5432/app',
      'REDIS_URL=redis://:r3d1sP4ss@cache:6379/0',
      `STRIPE_SECRET_KEY=${STRIPE_LIVE}`,
      'JWT_SECRET=9f8e7d6c5b4a3f2e1d0c',
      `GITHUB_TOKEN=${GITHUB_TOKEN}`,
      'SMTP_PASS="m41l-p4ss!"',
      'SESSION_SECRET=changeme',
      'OPENAI_API_KEY=<your-api-key>',
      'LOG_LEVEL=debug',
      'MAX_TOKENS=4096',
    ].join('\n');
    expect(redact(dump).text).toBe(
      [
        '$ cat .env',
        'NODE_ENV=production',
        'PORT=3000',
        'DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/app',
        'REDIS_URL=redis://:[REDACTED:url-password]@cache:6379/0',
        'STRIPE_SECRET_KEY=[REDACTED:stripe-key]',
        'JWT_SECRET=[REDACTED:secret]',
        'GITHUB_TOKEN=[REDACTED:github-token]',
        'SMTP_PASS="[REDACTED:password]"',
        'SESSION_SECRET=changeme',
        'OPENAI_API_KEY=<your-api-key>',
        'LOG_LEVEL=debug',
        'MAX_TOKENS=4096',
      ].join('\n'),
    );
  });

  it('should redact the credential of a curl Authorization header', () => {
    const command =
      `curl -s https://api.openai.com/v1/chat/completions -H 'Authorization: Bearer ${OPENAI_PROJECT}' ` +
      `-H "Content-Type: application/json" -d '{"model":"gpt-4o"}'`;
    expect(redact(command).text).toBe(
      "curl -s https://api.openai.com/v1/chat/completions -H 'Authorization: Bearer [REDACTED:openai-key]' " +
        `-H "Content-Type: application/json" -d '{"model":"gpt-4o"}'`,
    );
    expect(redact('curl -H "Authorization: Bearer 4f9a1c2e8b7d6a5f0e3c" https://x.io').text).toBe(
      'curl -H "Authorization: Bearer [REDACTED:bearer-token]" https://x.io',
    );
    expect(redact('Authorization: Basic ZGVwbG95OnMzY3IzdFBhc3M=').text).toBe(
      'Authorization: Basic [REDACTED:basic-auth]',
    );
    expect(redact(`Authorization: token ${GITHUB_TOKEN}`).text).toBe(
      'Authorization: token [REDACTED:github-token]',
    );
    expect(redact("curl -u 'deploy:Tr0ub4dor&3' https://nexus.internal/repo").text).toBe(
      "curl -u 'deploy:[REDACTED:password]' https://nexus.internal/repo",
    );
  });

  it('should redact only the password of psql connection strings', () => {
    expect(
      redact(
        'psql "postgresql://analytics:N0t-S0-S3cret@pg.internal:5432/warehouse?sslmode=require"',
      ).text,
    ).toBe(
      'psql "postgresql://analytics:[REDACTED:url-password]@pg.internal:5432/warehouse?sslmode=require"',
    );
    expect(redact('PGPASSWORD=Pg-Pa55word psql -h localhost -U app').text).toBe(
      'PGPASSWORD=[REDACTED:password] psql -h localhost -U app',
    );
    expect(redact('psql "host=db user=app password=K8s-Pa55 dbname=app"').text).toBe(
      'psql "host=db user=app password=[REDACTED:password] dbname=app"',
    );
    expect(
      redact('mongosh "mongodb+srv://reader:m0ng0Pass@cluster0.ab1cd.mongodb.net/shop"').text,
    ).toBe(
      'mongosh "mongodb+srv://reader:[REDACTED:url-password]@cluster0.ab1cd.mongodb.net/shop"',
    );
    expect(redact('amqp://guest:Rabb1tMQ!@mq:5672/ and mysql://root:My5ql@db/app').text).toBe(
      'amqp://guest:[REDACTED:url-password]@mq:5672/ and mysql://root:[REDACTED:url-password]@db/app',
    );
  });

  it('should redact AWS credentials passed to docker run', () => {
    const command = `docker run --rm -e AWS_ACCESS_KEY_ID=${AWS_KEY_ID} -e AWS_SECRET_ACCESS_KEY=${AWS_SECRET} -e AWS_REGION=eu-west-1 amazon/aws-cli s3 ls`;
    expect(redact(command).text).toBe(
      'docker run --rm -e AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id] ' +
        '-e AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-access-key] -e AWS_REGION=eu-west-1 amazon/aws-cli s3 ls',
    );
  });

  it('should redact AWS credentials in the ini file and in STS JSON output', () => {
    const ini = `[default]\naws_access_key_id = ${AWS_KEY_ID}\naws_secret_access_key = ${AWS_SECRET}\nregion = us-east-1`;
    expect(redact(ini).text).toBe(
      '[default]\naws_access_key_id = [REDACTED:aws-access-key-id]\n' +
        'aws_secret_access_key = [REDACTED:aws-secret-access-key]\nregion = us-east-1',
    );
    const sts = `{"Credentials": {"AccessKeyId": "${AWS_SESSION_KEY_ID}", "SecretAccessKey": "${AWS_SECRET}", "SessionToken": "FwoGZXIvYXdzEB${'k3Lm9Np'.repeat(4)}", "Expiration": "2026-02-18T12:00:00Z"}}`;
    expect(redact(sts).text).toBe(
      '{"Credentials": {"AccessKeyId": "[REDACTED:aws-access-key-id]", "SecretAccessKey": "[REDACTED:aws-secret-access-key]", ' +
        '"SessionToken": "[REDACTED:token]", "Expiration": "2026-02-18T12:00:00Z"}}',
    );
  });

  it('should redact a JSON config and keep its other fields', () => {
    const config = JSON.stringify(
      {
        database: { host: 'db', user: 'app', password: 'c0rr3ct-h0rse' },
        apiKey: GOOGLE_KEY,
        client_secret: 'GOCSPX-abc123def456',
        tokenizer: 'cl100k_base',
        max_tokens: 4096,
      },
      null,
      2,
    );
    const redacted = redact(config).text;
    expect(JSON.parse(redacted)).toEqual({
      database: { host: 'db', user: 'app', password: '[REDACTED:password]' },
      apiKey: '[REDACTED:google-api-key]',
      client_secret: '[REDACTED:secret]',
      tokenizer: 'cl100k_base',
      max_tokens: 4096,
    });
  });

  it('should redact a PEM block in cat output, whole and truncated', () => {
    expect(redact(`$ cat ~/.ssh/deploy_key\n${PEM}\n$ ls -la ~/.ssh`).text).toBe(
      '$ cat ~/.ssh/deploy_key\n[REDACTED:private-key]\n$ ls -la ~/.ssh',
    );
    const head = `$ head -3 key.pem\n-----BEGIN ${PEM_LABEL}-----\n${PEM_BODY.split('\n').slice(0, 2).join('\n')}\n$ echo done`;
    expect(redact(head).text).toBe('$ head -3 key.pem\n[REDACTED:private-key]\n$ echo done');
  });

  it('should redact a private key held in a JSON string (service account file)', () => {
    const escapedPem = `-----BEGIN ${'PRIVATE KEY'}-----\\n${PEM_BODY.replaceAll('\n', '\\n')}\\n-----END ${'PRIVATE KEY'}-----\\n`;
    const file = `{"type": "service_account", "project_id": "demo-123", "private_key": "${escapedPem}", "client_email": "bot@demo-123.iam.gserviceaccount.com"}`;
    expect(redact(file).text).toBe(
      '{"type": "service_account", "project_id": "demo-123", "private_key": "[REDACTED:private-key]", ' +
        '"client_email": "bot@demo-123.iam.gserviceaccount.com"}',
    );
  });

  it('should redact YAML and shell exports', () => {
    const yaml = [
      'spring:',
      '  datasource:',
      '    url: jdbc:postgresql://db:5432/app',
      '    username: app',
      '    password: Spr1ng-S3cret',
      'github:',
      `  token: ${GITHUB_TOKEN}`,
      '  token_type: bearer',
    ].join('\n');
    expect(redact(yaml).text).toBe(
      [
        'spring:',
        '  datasource:',
        '    url: jdbc:postgresql://db:5432/app',
        '    username: app',
        '    password: [REDACTED:password]',
        'github:',
        '  token: [REDACTED:github-token]',
        '  token_type: bearer',
      ].join('\n'),
    );
    const shell = `export OPENAI_API_KEY="${OPENAI_LEGACY}"; export ANTHROPIC_API_KEY=${ANTHROPIC_KEY} && claude`;
    expect(redact(shell).text).toBe(
      'export OPENAI_API_KEY="[REDACTED:openai-key]"; export ANTHROPIC_API_KEY=[REDACTED:anthropic-key] && claude',
    );
  });

  it('should redact CLI flags but not a following flag or a placeholder', () => {
    expect(redact('mysql --user=root --password=My5qlR00t! -h db').text).toBe(
      'mysql --user=root --password=[REDACTED:password] -h db',
    );
    expect(redact("app --client-secret 'S3cure!pass' --verbose").text).toBe(
      "app --client-secret '[REDACTED:secret]' --verbose",
    );
    expect(redact(`vault login --token ${VAULT_TOKEN}`).text).toBe(
      'vault login --token [REDACTED:vault-token]',
    );
    const kept = [
      'docker login --password-stdin registry.example.com',
      'app --password --verbose',
      'app --api-key "$API_KEY"',
      'mysql -u root -pS3cret123 app',
    ].join('\n');
    expect(redact(kept).text).toBe(kept);
  });

  it('should redact credentials in git remotes, .npmrc, docker config and Maven settings', () => {
    expect(redact(`git clone https://oauth2:${GITLAB_TOKEN}@gitlab.com/group/repo.git`).text).toBe(
      'git clone https://oauth2:[REDACTED:gitlab-token]@gitlab.com/group/repo.git',
    );
    expect(redact(`//registry.npmjs.org/:_authToken=${NPM_TOKEN}`).text).toBe(
      '//registry.npmjs.org/:_authToken=[REDACTED:npm-token]',
    );
    expect(
      redact('{"auths": {"registry.example.com": {"auth": "ZGVwbG95OnMzY3IzdFBhc3M="}}}').text,
    ).toBe('{"auths": {"registry.example.com": {"auth": "[REDACTED:credential]"}}}');
    expect(
      redact(
        '<server><id>nexus</id><username>deploy</username><password>N3xus!Deploy</password></server>',
      ).text,
    ).toBe(
      '<server><id>nexus</id><username>deploy</username><password>[REDACTED:password]</password></server>',
    );
  });

  it('should redact secrets in code and in natural language', () => {
    expect(redact(`client = OpenAI(api_key="${OPENAI_PROJECT}")`).text).toBe(
      'client = OpenAI(api_key="[REDACTED:openai-key]")',
    );
    expect(redact('ADMIN_PASSWORD: str = "Adm1n!2024"').text).toBe(
      'ADMIN_PASSWORD: str = "[REDACTED:password]"',
    );
    expect(redact('my db password is Hunter2024! can you connect to it?').text).toBe(
      'my db password is [REDACTED:password] can you connect to it?',
    );
    expect(redact("CREATE USER app IDENTIFIED BY 'S3cret#2024';").text).toBe(
      "CREATE USER app IDENTIFIED BY '[REDACTED:password]';",
    );
    expect(redact('machine api.heroku.com login me@example.com password 9d4f2c1e-77ab').text).toBe(
      'machine api.heroku.com login me@example.com password [REDACTED:password]',
    );
    expect(redact('GET /v1/items?access_token=a1b2c3d4e5f6g7h8&page=2').text).toBe(
      'GET /v1/items?access_token=[REDACTED:token]&page=2',
    );
  });

  it('should redact escaped JSON inside a JSON string', () => {
    const nested = '{"argsJson": "{\\"password\\": \\"abc123xyz\\", \\"user\\": \\"bob\\"}"}';
    expect(redact(nested).text).toBe(
      '{"argsJson": "{\\"password\\": \\"[REDACTED:password]\\", \\"user\\": \\"bob\\"}"}',
    );
  });

  it('should redact high-entropy values of merely key-like names only', () => {
    expect(redact('MAPS_KEY=Xq9Lm2Np4Rt6Vw8Yz0Ab').text).toBe(
      'MAPS_KEY=[REDACTED:high-entropy-key]',
    );
    expect(redact('key: "a8f5f167f44f4964e6c998dee827110c"').text).toBe(
      'key: "[REDACTED:high-entropy-key]"',
    );
    const kept = [
      'sort_key: created_at_desc',
      'cache_key: user_profile_v2',
      'key: 123e4567-e89b-12d3-a456-426614174000',
      'key: 3f786850e387550fdab836ed7e6dc881de23001b',
      'public_key: Xq9Lm2Np4Rt6Vw8Yz0Ab',
    ].join('\n');
    expect(redact(kept).text).toBe(kept);
  });
});

describe('redactSecrets: ordinary text stays as it is', () => {
  it.each([
    [
      'git log',
      'commit 3f786850e387550fdab836ed7e6dc881de23001b\nMerge: 1a2b3c4 5d6e7f8\nAuthor: Ada <ada@example.com>\n\n    Fix token refresh (#42)',
    ],
    [
      'UUIDs',
      'eventId: 123e4567-e89b-12d3-a456-426614174000, sessionId=9b2f6c1e-4d3a-4f5b-8c7d-2e1f0a9b8c7d',
    ],
    [
      'file paths',
      'Read /home/ada/.ssh/id_rsa.pub, src/auth/token.service.ts and C:\\Users\\ada\\secrets.json',
    ],
    [
      'package versions',
      '"typescript": "5.9.3", "@nestjs/core": "^11.2.10", installed vitest@4.1.12 and zod@4.6.7',
    ],
    ['short base64', 'echo aGVsbG8gd29ybGQ= | base64 -d'],
    [
      'token words',
      'The tokenizer splits text; token_count = 5; max_tokens: 4096; "input_tokens": 1532; tokens=12',
    ],
    [
      'password prose',
      'Implement the password reset flow. The password is required and must be 8+ chars.',
    ],
    ['bearer prose', 'Send the Bearer token in the Authorization header. Authorization: required'],
    [
      'TypeScript',
      [
        'export class AuthService {',
        '  private readonly secret: string;',
        '  constructor(private readonly config: ConfigService) {',
        "    this.secret = config.get('JWT_SECRET');",
        '  }',
        '  async login(password: string, token?: string): Promise<string> {',
        '    const passwordHash = await bcrypt.hash(password, 10);',
        '    const apiKey = process.env.API_KEY;',
        '    const accessToken = this.jwt.sign({ sub: user.id });',
        '    const tokenType = isRefresh ? REFRESH_TOKEN : ACCESS_TOKEN;',
        "    console.log('password:', password);",
        '    return accessToken;',
        '  }',
        '}',
      ].join('\n'),
    ],
    [
      'compiled JavaScript',
      'exports.auth = auth_1.default;\nconst wsToken = __WS_TOKEN__;\nvar token = tokens_1_1.value;\n' +
        'secretKey: Uint8Array; googleCredentials: OAuth2Client; const tokenFragment = !isImportTypeIssue;',
    ],
    [
      'placeholders',
      [
        'OPENAI_API_KEY=<your-api-key>',
        'password: ${DB_PASSWORD}',
        'token: "{{ secrets.GITHUB_TOKEN }}"',
        'PASSWORD=changeme',
        'API_KEY=********',
        'secret: xxxxxxxxxxxxxxxx',
        "api_key = 'your_api_key_here'",
        'Authorization: Bearer $TOKEN',
        'postgres://user:${PGPASS}@db:5432/app',
        'redis://:<password>@localhost:6379',
        'password=[REDACTED:password]',
      ].join('\n'),
    ],
    ['plain words as values', 'password: hunter\ntoken: none\nsecret: supersecret\nauth: github'],
    ['uid:gid', 'docker run -u 1000:1000 node:20 npm test'],
    ['markdown emphasis', 'username and password **SHOULD** be redacted'],
    ['non-English messages', '"Unexpected_token_expected_1179": "意外标记。应为 \\"{\\"。"'],
  ])('should keep %s', (_label, text) => {
    const result = redactSecrets(text);
    expect(result.findings).toEqual([]);
    expect(result.text).toBe(text);
  });
});

describe('redactSecrets: findings', () => {
  const text =
    `Deploy with GITHUB_TOKEN=${GITHUB_TOKEN} and postgres://app:Xk9pQ2mL7@db/app, ` +
    `then call the API with Authorization: Bearer ${JWT}.`;

  it('should give positions in the original text, in order, without overlaps', () => {
    const result = redactSecrets(text);
    expect(result.findings.map((finding) => finding.kind)).toEqual([
      'github-token',
      'url-password',
      'jwt',
    ]);
    expect(result.findings.map((finding) => text.slice(finding.start, finding.end))).toEqual([
      GITHUB_TOKEN,
      'Xk9pQ2mL7',
      JWT,
    ]);
    for (let index = 1; index < result.findings.length; index += 1) {
      expect(result.findings[index].start).toBeGreaterThanOrEqual(result.findings[index - 1].end);
    }
  });

  it('should never carry the secret itself', () => {
    const result = redactSecrets(text);
    for (const finding of result.findings) {
      expect(Object.keys(finding).sort()).toEqual(['end', 'kind', 'start']);
    }
    const serialised = JSON.stringify(result);
    for (const secret of [GITHUB_TOKEN, 'Xk9pQ2mL7', JWT]) {
      expect(serialised).not.toContain(secret);
    }
  });

  it('should merge overlapping detections into one finding named by the most specific', () => {
    // The value of API_KEY is both an assignment and an OpenAI key.
    expect(redactedPieces(`API_KEY=${OPENAI_LEGACY}`)).toEqual([['openai-key', OPENAI_LEGACY]]);
    // The credential of the header is both a bearer token and a JWT.
    expect(redactedPieces(`Authorization: Bearer ${JWT}`)).toEqual([['jwt', JWT]]);
  });

  it('should return the input itself when there is nothing to redact', () => {
    const input = 'nothing to see here';
    expect(redactSecrets(input)).toEqual({ text: input, findings: [] });
    expect(redactSecrets('')).toEqual({ text: '', findings: [] });
  });
});

describe('redactSecrets: idempotency', () => {
  it('should never redact a marker again', () => {
    const markers = [
      'password=[REDACTED:password]',
      'Authorization: Bearer [REDACTED:bearer-token]',
      'postgres://app:[REDACTED:url-password]@db/app',
      '"private_key": "[REDACTED:private-key]"',
      '--token [REDACTED:vault-token]',
      'key: [REDACTED:high-entropy-key]',
    ].join('\n');
    expect(redactSecrets(markers)).toEqual({ text: markers, findings: [] });
  });

  it('should reach a fixed point when a marker exposes its neighbour', () => {
    // Glued to the token, `--password` is no flag; next to the marker it is one.
    const text = `${GITHUB_TOKEN}--password Zx9Yw8Vu7T done`;
    const result = redact(text);
    expect(result.text).toBe('[REDACTED:github-token]--password [REDACTED:password] done');
    expect(redactedPieces(text)).toEqual([
      ['github-token', GITHUB_TOKEN],
      ['password', 'Zx9Yw8Vu7T'],
    ]);
  });

  it('should give the same text when redacting twice, for every kind of input', () => {
    const inputs = [
      `A=${GITHUB_TOKEN},B=${STRIPE_LIVE};C=${GOOGLE_KEY}`,
      `${PEM}${PEM}`,
      `token: "Bearer ${GITHUB_TOKEN}"`,
      `"Authorization": "Basic ZGVwbG95OnMzY3IzdFBhc3M=", "password": "p@ss w0rd!"`,
      `https://u:${SLACK_TOKEN}@h/x?token=${JWT}`,
      'password=abc123xyz.',
    ];
    for (const input of inputs) {
      const once = redactSecrets(input).text;
      expect(once).not.toBe(input);
      expect(redactSecrets(once).text).toBe(once);
    }
  });
});

describe('redactSecrets: linear time', () => {
  const size = 1 << 20;
  const fill = (unit: string): string => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

  // Inputs built to make a backtracking regex retry at every offset of a long run.
  it.each<[string, () => string]>([
    ['one long word', () => fill('a')],
    ['chained assignments', () => fill('a=')],
    ['chained YAML keys', () => fill('a:')],
    ['repeated secret names', () => fill('password=')],
    ['unterminated quoted values', () => fill('password="')],
    ['escaped quotes', () => fill('password:\\"')],
    ['a value of colons and slashes', () => fill('password:/')],
    ['repeated flags', () => fill('--password=')],
    ['repeated sk- prefixes', () => fill('sk-')],
    ['repeated eyJ parts', () => fill('eyJabcdef.')],
    ['repeated BEGIN lines', () => fill('-----BEGIN PRIVATE KEY-----')],
    ['a BEGIN line with an endless body', () => '-----BEGIN PRIVATE KEY-----\n' + fill('QUJD\n')],
    ['URL-like runs', () => fill('a://b:')],
    ['a URL with an endless password', () => 'a://' + fill('b:')],
    ['repeated headers', () => fill('Authorization: Bearer ')],
    ['repeated XML tags', () => fill('<password>')],
    ['backslashes', () => fill('\\')],
    ['a value of dots', () => 'password=' + fill('.') + 'x'],
    ['a camelCase value', () => 'password=' + fill('aA')],
    ['a prose value', () => 'password="' + fill('word ') + '"'],
    ['a masked value', () => 'password=' + fill('*') + 'x'],
    ['repeated type annotations', () => fill('password: str ')],
    ['repeated user flags', () => fill('-u a:')],
    ['base64', () => fill('QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwYWJjZGVm+/')],
  ])('should finish on 1 MB of %s', (_label, build) => {
    const text = build();
    const result = redactSecrets(text);
    expect(result.text.length).toBeGreaterThan(0);
  });
});

describe('redactJson', () => {
  it('should redact strings deep inside tool arguments', () => {
    const args = {
      command: `curl -H 'Authorization: Bearer 4f9a1c2e8b7d6a5f0e3c' https://api.example.com/items`,
      description: 'List the items',
      env: [{ name: 'GITHUB_TOKEN', value: `export GITHUB_TOKEN=${GITHUB_TOKEN}` }],
    };
    expect(redactJson(args)).toEqual({
      value: {
        command: `curl -H 'Authorization: Bearer [REDACTED:bearer-token]' https://api.example.com/items`,
        description: 'List the items',
        env: [{ name: 'GITHUB_TOKEN', value: 'export GITHUB_TOKEN=[REDACTED:github-token]' }],
      },
      findingCount: 2,
    });
  });

  it('should redact the whole value of secret-named keys, whatever it looks like', () => {
    const input = {
      password: 'hunter2',
      apiKey: 'abc',
      API_KEY: 12345678,
      Authorization: 'Bearer x',
      privateKey: 'k',
      client_secret: 'plain',
      auth: { token: 'short', user: 'ada' },
      secrets: ['one', 'two'],
    };
    expect(redactJson(input)).toEqual({
      value: {
        password: '[REDACTED:password]',
        apiKey: '[REDACTED:api-key]',
        API_KEY: '[REDACTED:api-key]',
        Authorization: '[REDACTED:authorization]',
        privateKey: '[REDACTED:private-key]',
        client_secret: '[REDACTED:secret]',
        auth: { token: '[REDACTED:token]', user: 'ada' },
        secrets: ['[REDACTED:secret]', '[REDACTED:secret]'],
      },
      findingCount: 9,
    });
  });

  it('should keep ordinary keys, empty values, null, booleans and JSON Schemas', () => {
    const input = {
      token_count: 5,
      tokenizer: 'cl100k_base',
      max_tokens: 4096,
      usage: { input_tokens: 12, output_tokens: 3 },
      password: '',
      secret: null,
      token: true,
      properties: { password: { type: 'string', minLength: 8 } },
      key: 'src/app.ts',
      sessionId: '9b2f6c1e-4d3a-4f5b-8c7d-2e1f0a9b8c7d',
    };
    expect(redactJson(input)).toEqual({ value: input, findingCount: 0 });
  });

  it('should redact high-entropy values of key-like names only', () => {
    expect(redactJson({ key: 'a8f5f167f44f4964e6c998dee827110c' }).value).toEqual({
      key: '[REDACTED:high-entropy-key]',
    });
  });

  it('should redact secrets used as object keys', () => {
    expect(redactJson({ [GITHUB_TOKEN]: 1 })).toEqual({
      value: { '[REDACTED:github-token]': 1 },
      findingCount: 1,
    });
  });

  it('should not modify its input and be a fixed point', () => {
    const input = { password: 'hunter2', nested: { command: `echo ${GITHUB_TOKEN}` } };
    const copy = structuredClone(input);
    const once = redactJson(input);
    expect(input).toEqual(copy);
    expect(redactJson(once.value)).toEqual({ value: once.value, findingCount: 0 });
  });

  it('should keep "__proto__" an ordinary key', () => {
    const parsed: unknown = JSON.parse('{"__proto__": {"password": "hunter22x"}}');
    const { value } = redactJson(parsed);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(JSON.stringify(value)).toBe('{"__proto__":{"password":"[REDACTED:password]"}}');
  });
});

describe('redactJsonText', () => {
  it('should redact JSON text and re-serialise it', () => {
    const argsJson = JSON.stringify({
      command: 'export DB_PASSWORD=abc123xyz && npm run migrate',
      description: 'Run migrations',
    });
    expect(redactJsonText(argsJson)).toEqual({
      text: '{"command":"export DB_PASSWORD=[REDACTED:password] && npm run migrate","description":"Run migrations"}',
      findingCount: 1,
    });
  });

  it('should keep the original text when nothing was found', () => {
    const argsJson = '{ "file_path": "/src/app.ts",   "limit": 20 }';
    expect(redactJsonText(argsJson)).toEqual({ text: argsJson, findingCount: 0 });
  });

  it('should redact text that is not JSON as plain text', () => {
    expect(redactJsonText(`{"broken": "${GITHUB_TOKEN}"`)).toEqual({
      text: '{"broken": "[REDACTED:github-token]"',
      findingCount: 1,
    });
  });
});

describe('classifySecretName', () => {
  it.each<[string, RedactionKind]>([
    ['password', 'password'],
    ['DB_PASSWORD', 'password'],
    ['PGPASSWORD', 'password'],
    ['SMTP_PASS', 'password'],
    ['confirmPassword', 'password'],
    ['secret', 'secret'],
    ['client_secret', 'secret'],
    ['JWT_SECRET', 'secret'],
    ['SECRET_KEY_BASE', 'secret'],
    ['token', 'token'],
    ['GITHUB_TOKEN', 'token'],
    ['accessToken', 'token'],
    ['_authToken', 'token'],
    ['PRIVATE-TOKEN', 'token'],
    ['password_reset_token', 'token'],
    ['apiKey', 'api-key'],
    ['api_key', 'api-key'],
    ['x-api-key', 'api-key'],
    ['APIKey', 'api-key'],
    ['privateKey', 'private-key'],
    ['AWS_SECRET_ACCESS_KEY', 'aws-secret-access-key'],
    ['SecretAccessKey', 'aws-secret-access-key'],
    ['credentials', 'credential'],
    ['auth', 'credential'],
    ['Authorization', 'authorization'],
    ['spring.datasource.password', 'password'],
  ])('should take %s for a secret name (%s)', (name, kind) => {
    expect(classifySecretName(name)).toEqual({ kind, strength: 'secret' });
  });

  it.each([
    'tokenizer',
    'max_tokens',
    'input_tokens',
    'token_count',
    'token_type',
    'tokenUsage',
    'access_token_expires_at',
    'password_reset_url',
    'passwordMinLength',
    'passwordless',
    'secretName',
    'SecretsManager',
    'secretary',
    'bypass',
    'public_key',
    'sort_key',
    'auth_callback',
    'AUTH_FOLLOW_UP',
    'token.close',
    'has_password',
    'user',
    'monkey',
  ])('should not take %s for a secret name', (name) => {
    expect(classifySecretName(name)).toBeNull();
  });

  it('should take other keys for key-like names', () => {
    expect(classifySecretName('STRIPE_KEY')).toEqual({
      kind: 'high-entropy-key',
      strength: 'key-like',
    });
  });
});

describe('looksLikeSecretValue and looksHighEntropy', () => {
  it.each(['hunter22', 'S3cr3tPw', 'Hunter2024!', '12345678', 'p@ss w0rd!', 'MyS3cretPass'])(
    'should take %s for a secret',
    (value) => {
      expect(looksLikeSecretValue(value)).toBe(true);
    },
  );

  it.each([
    'abc12',
    'supersecret',
    'GITHUB_TOKEN',
    'my-secret-token',
    'process.env.TOKEN',
    'os.getenv(',
    'authData1',
    'OAuth2Client',
    '/etc/secret.key',
    'https://auth.example.com',
    '<your-key>',
    '${API_KEY}',
    'changeme',
    '********',
    'Invalid token provided',
    '[REDACTED:password]',
  ])('should not take %s for a secret', (value) => {
    expect(looksLikeSecretValue(value)).toBe(false);
  });

  it('should take only generated-looking values for high entropy', () => {
    expect(looksHighEntropy('Xq9Lm2Np4Rt6Vw8Yz0Ab')).toBe(true);
    expect(looksHighEntropy('a8f5f167f44f4964e6c998dee827110c')).toBe(true);
    expect(looksHighEntropy('user_profile_settings_v2')).toBe(false);
    expect(looksHighEntropy('123e4567-e89b-12d3-a456-426614174000')).toBe(false);
    expect(looksHighEntropy('3f786850e387550fdab836ed7e6dc881de23001b')).toBe(false);
  });
});
