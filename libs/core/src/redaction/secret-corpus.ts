/**
 * Real-format secrets, one per kind a developer's prompts and tool calls leak (issue #19,
 * finding 4), each in the context it usually appears in. Values are made up but have the
 * real shape (prefix, alphabet, length, mixed case): built from a seeded generator so no real
 * credential sits in the repository and secret scanners stay quiet. Test support only.
 */
function generator(seed: number) {
  let state = seed >>> 0;
  return (alphabet: string, length: number): string => {
    let out = '';
    for (let i = 0; i < length; i += 1) {
      state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
      out += alphabet[(state >>> 8) % alphabet.length];
    }
    return out;
  };
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const BASE64 = `${ALNUM}+/`;
const BASE64URL = `${ALNUM}-_`;
const HEX = '0123456789abcdef';

export interface CorpusSecret {
  /** What it is (a kind of credential, not necessarily a RedactionKind). */
  name: string;
  /** The secret itself: none of it may survive redaction. */
  secret: string;
  /** The secret in a typical sentence, command or file line. */
  text: string;
}

export function secretCorpus(seed = 19): CorpusSecret[] {
  const r = generator(seed);
  const s = (name: string, secret: string, text: (secret: string) => string) => ({
    name,
    secret,
    text: text(secret),
  });
  const awsSecret = `${r(BASE64, 40)}`;
  const awsSecretSlash = `/${r(BASE64, 39)}`;
  const jwt = [
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9',
    'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0',
    r(BASE64URL, 43),
  ].join('.');
  const pemBody = Array.from({ length: 6 }, () => r(BASE64, 64)).join('\n');
  return [
    s('github classic token', `ghp_${r(ALNUM, 36)}`, (x) => `export GITHUB_TOKEN=${x}`),
    s('github oauth token', `gho_${r(ALNUM, 36)}`, (x) => `the token ${x} expired`),
    s('github fine-grained token', `github_pat_${r(ALNUM, 22)}_${r(ALNUM, 59)}`, (x) => `use ${x}`),
    s('aws access key id', `AKIA${r(UPPER_DIGITS, 16)}`, (x) => `aws_access_key_id = ${x}`),
    s('aws secret (named)', awsSecret, (x) => `AWS_SECRET_ACCESS_KEY=${x}`),
    s('aws secret starting with /', awsSecretSlash, (x) => `AWS_SECRET_ACCESS_KEY=${x}`),
    s('aws secret in prose', `${r(BASE64, 12)}/${r(BASE64, 27)}`, (x) => `my secret is ${x} ok`),
    s(
      'slack bot token',
      `xoxb-${r('0123456789', 12)}-${r('0123456789', 13)}-${r(ALNUM, 24)}`,
      (x) => `SLACK_BOT=${x}`.replace('SLACK_BOT=', 'slack token: '),
    ),
    s('stripe live key', `sk_live_${r(ALNUM, 24)}`, (x) => `Stripe.apiKey = "${x}";`),
    s('google api key', `AIza${r(BASE64URL, 35)}`, (x) => `?key=${x}&q=maps`),
    s('openai key', `sk-${r(ALNUM, 48)}`, (x) => `openai.api_key = '${x}'`),
    s(
      'openai project key',
      `sk-proj-${r(BASE64URL, 48)}T3BlbkFJ${r(BASE64URL, 48)}`,
      (x) => `key ${x}`,
    ),
    s('anthropic key', `sk-ant-api03-${r(BASE64URL, 93)}AA`, (x) => `ANTHROPIC_API_KEY=${x}`),
    s('jwt', jwt, (x) => `curl -H "X-Session: ${x}" https://api.example.com`),
    s(
      'private key (PEM)',
      `-----BEGIN RSA PRIVATE KEY-----\n${pemBody}\n-----END RSA PRIVATE KEY-----`,
      (x) => `cat id_rsa\n${x}\n`,
    ),
    s('postgres url password', r(ALNUM, 16), (x) => `postgres://app:${x}@db.internal:5432/app`),
    s('mysql url password', r(ALNUM, 14), (x) => `DATABASE_URL=mysql://root:${x}@127.0.0.1/shop`),
    s(
      'mongodb url password',
      r(ALNUM, 18),
      (x) => `mongodb+srv://admin:${x}@cluster0.mongodb.net/x`,
    ),
    s('redis url password', r(ALNUM, 20), (x) => `redis://default:${x}@cache:6379/0`),
    s('basic-auth url', r(ALNUM, 12), (x) => `git clone https://bob:${x}@git.example.com/r.git`),
    s('bearer header', r(BASE64URL, 40), (x) => `-H 'Authorization: Bearer ${x}'`),
    s('npm token', `npm_${r(ALNUM, 36)}`, (x) => `//registry.npmjs.org/:_authToken=${x}`),
    s('generic password', `${r(ALNUM, 10)}!9`, (x) => `password=${x}`),
    s(
      'azure storage key',
      `${r(BASE64, 86)}==`,
      (x) =>
        `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${x};EndpointSuffix=core.windows.net`,
    ),
    s('twilio auth token', r(HEX, 32), (x) => `TWILIO_AUTH_TOKEN=${x}`),
    s('sendgrid key', `SG.${r(BASE64URL, 22)}.${r(BASE64URL, 43)}`, (x) => `SENDGRID_API_KEY=${x}`),
    s('gitlab token', `glpat-${r(BASE64URL, 20)}`, (x) => `token ${x}`),
    s('vault token', `hvs.${r(ALNUM, 24)}`, (x) => `VAULT_TOKEN=${x}`),
    s(
      'slack webhook',
      `T${r(UPPER_DIGITS, 8)}/B${r(UPPER_DIGITS, 8)}/${r(ALNUM, 24)}`,
      (x) => `https://hooks.slack.com/services/${x}`,
    ),
  ];
}
