import { truncateChars } from '../tokens';
import { sentencesOf } from './assertions';

/**
 * What a user asked the agent to do, in the words of a report of it: "now add rate limiting to
 * the search endpoint, 20 requests per minute" → "Added rate limiting to the search endpoint (20
 * requests per minute)". Deterministic and general: a request's clauses (sentences, then parts
 * split at commas and semicolons) are stripped of fillers ("ok", "now", "please", "can you",
 * "let's"), and a clause that starts with an imperative verb of the table below is put in the
 * past tense (with a verb after "and" in it); the other plain clauses of the request are its
 * context, kept in parentheses when short. Questions that are not polite requests are no action.
 */

/** Imperative verbs of coding requests → their past tense. */
const IRREGULAR: Readonly<Record<string, string>> = {
  write: 'wrote',
  rewrite: 'rewrote',
  make: 'made',
  set: 'set',
  reset: 'reset',
  build: 'built',
  rebuild: 'rebuilt',
  split: 'split',
  put: 'put',
  run: 'ran',
  rerun: 'reran',
  get: 'got',
  keep: 'kept',
  find: 'found',
  undo: 'undid',
  do: 'did',
  bring: 'brought',
  shut: 'shut',
  cut: 'cut',
};
const REGULAR = (
  'add fix update remove delete rename move migrate create implement refactor convert change ' +
  'replace use switch upgrade bump install uninstall configure enable disable extract merge clean ' +
  'document improve optimize optimise handle support introduce drop deprecate revert restore cover ' +
  'generate deploy release publish wire hook expose hide limit cap raise lower increase ' +
  'decrease reduce simplify inline unify rework restructure reorganize reorganise split port ' +
  'adapt align tidy format lint test validate sanitize sanitise escape memoize retry ' +
  'register load parse serialize serialise review patch pin unpin ' +
  'archive copy apply commit push tag stage edit modify adjust tweak correct guard check ensure ' +
  'allow block prevent avoid stop start skip mock stub fake speed harden secure encrypt rotate ' +
  'expire invalidate paginate sort filter throttle debounce clear ' +
  'reset mark flag annotate translate localize localise export import embed attach detach ' +
  'integrate connect disconnect separate combine group nest flatten wrap unwrap specify declare ' +
  'define describe include exclude require'
)
  .split(/\s+/)
  .filter((verb) => verb !== '' && !(verb in IRREGULAR));
const VERBS: ReadonlySet<string> = new Set([...REGULAR, ...Object.keys(IRREGULAR)]);

/** Words that say nothing before a request ("ok now please …", "can you …", "let's …"). */
const FILLER =
  /^(?:(?:ok(?:ay)?|yes|yeah|yep|sure|great|nice|cool|good|perfect|alright|right|now|so|and|also|then|next|first|finally|please|pls|just|hey|hi|actually|instead|lets|let's|let us)\b[\s,.!:;…-]*)+/i;
const POLITE =
  /^(?:can|could|would|will)\s+(?:you|we)\s+(?:please\s+)?|^(?:i\s+(?:want|need|would like|'d like)\s+(?:you\s+)?to)\s+|^(?:we|you)\s+(?:should|need to|have to|must)\s+/i;
const NOT_AFTER_VERB =
  /^\s+(?:is|are|was|were|has|have|had|does|did|doesn'?t|didn'?t|isn'?t|won'?t|can'?t|should|will|would|can|could|seems?|fails?|failed|failing|works?|worked|passes|passed|keeps?|looks?|still)\b/i;
const MARKUP = /<\/?[a-z][\w-]*>/gi;

const MAX_ACTION_CHARS = 220;
const MAX_CONTEXT_WORDS = 14;

/** The past tense of a verb of the table ("add" → "added", "apply" → "applied"). */
export function pastTense(verb: string): string {
  const lower = verb.toLowerCase();
  const irregular = IRREGULAR[lower];
  if (irregular !== undefined) return irregular;
  if (lower.endsWith('e')) return `${lower}d`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ied`;
  // One short vowel between consonants, stressed: "drop" → "dropped", "ship" → "shipped".
  if (/^[^aeiou]*[aeiou][bdgmnprt]$/.test(lower) && lower.length <= 4) {
    return `${lower}${lower.slice(-1)}ed`;
  }
  return `${lower}ed`;
}

/** A clause with its fillers and polite lead-in removed, or null when nothing is left. */
function bare(clause: string): string {
  let text = clause.replace(MARKUP, ' ').replace(/\s+/g, ' ').trim();
  for (let i = 0; i < 3; i += 1) {
    const next = text.replace(FILLER, '').replace(POLITE, '').trim();
    if (next === text) break;
    text = next;
  }
  return text
    .replace(/^[,;:—-]\s*/, '')
    .replace(/[.!?…]+$/, '')
    .trim();
}

/** The clause in the past tense when it starts with an imperative verb, else null. */
export function actionOf(clause: string): string | null {
  const text = bare(clause);
  const match = /^([a-z]+)\b(.*)$/i.exec(text);
  if (match === null || !VERBS.has(match[1].toLowerCase())) return null;
  // "test fails", "cache is stale": the word is a noun followed by its verb, not an imperative.
  if (NOT_AFTER_VERB.test(match[2])) return null;
  // A lone verb ("fix it", "commit") says nothing a reader can use.
  if (
    match[2]
      .trim()
      .split(/\s+/)
      .filter((w) => !/^(?:it|this|that|them|now)$/i.test(w))
      .join('') === ''
  ) {
    return null;
  }
  const rest = match[2].replace(
    /\b(and|then)\s+([a-z]+)\b/gi,
    (whole, joiner: string, verb: string) =>
      VERBS.has(verb.toLowerCase()) && !/^(?:it|the)$/i.test(verb)
        ? `${joiner} ${pastTense(verb)}`
        : whole,
  );
  const past = pastTense(match[1]);
  return `${past.charAt(0).toUpperCase()}${past.slice(1)}${rest}`;
}

function clausesOf(text: string): string[] {
  return sentencesOf(text.replace(MARKUP, ' ')).flatMap((sentence) =>
    sentence.split(/\s*[;,]\s+|\.\.\.+\s*|…\s*/).filter((clause) => clause.trim() !== ''),
  );
}

/** True for a clause that asks something rather than asking for something. */
function isQuestion(clause: string): boolean {
  return /\?\s*$/.test(clause) && !POLITE.test(bare(clause.replace(FILLER, '')));
}

/**
 * A request as a report of what was done: its action clauses in the past tense (at most two),
 * with its short plain clauses as context in parentheses; null when it asks for no action.
 */
export function requestAsAction(text: string): string | null {
  const actions: string[] = [];
  const context: string[] = [];
  for (const clause of clausesOf(text)) {
    if (isQuestion(clause) && actionOf(clause) === null) continue;
    const action = actionOf(clause);
    if (action !== null) {
      if (actions.length < 2) actions.push(action);
    } else if (actions.length > 0 || context.length === 0) {
      const plain = bare(clause);
      if (plain.split(/\s+/).length >= 3 && plain.split(/\s+/).length <= MAX_CONTEXT_WORDS) {
        context.push(plain);
      }
    }
  }
  if (actions.length === 0) return null;
  const main = actions
    .map((action, i) => (i === 0 ? action : `${action.charAt(0).toLowerCase()}${action.slice(1)}`))
    .join('; ');
  const extra = context.length > 0 ? ` (${context.slice(0, 2).join('; ')})` : '';
  return truncateChars(`${main}${extra}`, MAX_ACTION_CHARS);
}
