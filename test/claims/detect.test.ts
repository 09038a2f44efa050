import { describe, expect, it } from 'vitest';
import { detectClaims, MAX_CLAIMS, placesOf } from '../../src/claims/detect.js';
import { compileClaimWords, ENGLISH_CLAIM_WORDS } from '../../src/claims/words.js';
import english from '../../src/claims/words/en.json' with { type: 'json' };

const verbs = (text: string) => detectClaims(text).map((c) => c.verb);

describe('detectClaims: claims of a change', () => {
  it.each([
    ['I restarted the service.', 'restarted'],
    ['I have deleted the old build folder.', 'deleted'],
    ["We've just pushed the fix.", 'pushed'],
    ['The staging table has been dropped.', 'dropped'],
    ['Your reservation has been successfully cancelled.', 'cancelled'],
    ['The folder is now gone.', 'gone'],
    ['The staging tables are gone.', 'gone'],
    ['The config is now updated.', 'updated'],
    ['Fixed and deployed.', 'fixed'],
    ['Removed the old copy.', 'removed'],
    ['Done: the folder is now called lib.', 'done'],
    ['All done - both services restarted.', 'all done'],
    ['I rolled back the migration.', 'rolled back'],
  ])('%s → %s', (text, verb) => {
    expect(verbs(text)).toEqual([verb]);
  });

  it.each([
    ['I will restart the service.'],
    ["I'll delete it once you confirm."],
    ['Would you like me to delete the folder?'],
    ['Have you restarted the service?'],
    ["I can't delete that file."],
    ['The file was not deleted.'],
    ['No reservation has been cancelled.'],
    ['If you want, I have updated the draft.'],
    ['Once the reservation has been cancelled, the refund follows.'],
    ['It seems the service has been restarted.'],
    ['I have found your reservation.'],
    ['I have checked the logs and looked up the user.'],
    ['Your reservation was created on 2024-05-01.'],
    ['The amount is fixed at $50 per passenger.'],
    ['- **Created At:** 2024-05-14'],
    ['done'],
  ])('no claim: %s', (text) => {
    expect(detectClaims(text)).toEqual([]);
  });

  it('gives each claim its sentence, verb, object, places and span in the answer', () => {
    const answer = 'Sure.\nI generated `orders.json` with both orders. Anything else?';
    const [claim, ...rest] = detectClaims(answer);
    expect(rest).toEqual([]);
    expect(claim).toEqual({
      text: 'I generated `orders.json` with both orders.',
      verb: 'generated',
      object: '`orders.json` with both orders',
      places: ['orders.json'],
      span: [6, 49],
    });
    expect(answer.slice(...claim!.span)).toBe(claim!.text);
  });

  it('one claim per sentence, in order', () => {
    const claims = detectClaims('I deleted /tmp/a. Then I restarted nginx! Nothing else changed.');
    expect(claims.map((c) => [c.verb, c.places])).toEqual([
      ['deleted', ['/tmp/a']],
      ['restarted', []],
    ]);
  });

  it('the places of a passive claim are in its subject; a new value after "to" is none', () => {
    const [claim] = detectClaims('Reservation M20IZO has been changed to flight HAT266.');
    expect(claim!.places).toEqual(['M20IZO']);
    expect(claim!.object).toBe('Reservation M20IZO');
    expect(detectClaims('Your flight has been changed to flight HAT266.')[0]!.places).toEqual([]);
  });

  it('the places of an active claim follow the verb, up to a preposition other than "to" or "into"', () => {
    expect(detectClaims('I pushed your two commits to origin/main.')[0]!.places).toEqual(['origin/main']);
    expect(detectClaims("I've issued a certificate for the delay of flight HAT045.")[0]!.places).toEqual([]);
    expect(detectClaims('I moved q1.csv into out/ for you.')[0]!.places).toEqual(['q1.csv', 'out/']);
  });

  it('reads no more than MAX_CLAIMS claims, and nothing from a non-string', () => {
    expect(detectClaims('I deleted x. '.repeat(MAX_CLAIMS + 5))).toHaveLength(MAX_CLAIMS);
    expect(detectClaims(undefined)).toEqual([]);
    expect(detectClaims({ text: 'I deleted x.' })).toEqual([]);
  });
});

describe('placesOf', () => {
  it('finds back-quoted names, paths, file names and ids, without repeats', () => {
    expect(placesOf('removed `build/` and /srv/app/cache/, edited src/a.ts, package.json and ABC123; ABC123 again')).toEqual([
      'build/',
      '/srv/app/cache/',
      'src/a.ts',
      'package.json',
      'ABC123',
    ]);
  });

  it('takes no abbreviation, number, plain word or all-letter capitals for a place', () => {
    expect(placesOf('e.g. 3.50 dollars, i.e. HATHAT and the service')).toEqual([]);
  });
});

describe('claim words as data', () => {
  it('compiles the English file', () => {
    expect(ENGLISH_CLAIM_WORDS.language).toBe('en');
    expect(ENGLISH_CLAIM_WORDS.patterns.length).toBe(english.patterns.length);
  });

  it('another language is another file of the same shape', () => {
    const german = compileClaimWords({
      language: 'de',
      changeVerbs: ['gelöscht', 'neu gestartet'],
      stateWords: [],
      adverbs: ['erfolgreich'],
      patterns: [{ name: 'perfect', regex: '\\b(?:habe|hat|wurde)\\s+.{0,40}?({verb})\\b' }],
      exclusions: [{ name: 'negation', regex: '\\bnicht\\b' }],
    });
    expect(detectClaims('Ich habe den Ordner gelöscht.', german).map((c) => c.verb)).toEqual(['gelöscht']);
    expect(detectClaims('Ich habe den Ordner nicht gelöscht.', german)).toEqual([]);
  });

  it('refuses a file of the wrong shape, naming what is wrong', () => {
    expect(() => compileClaimWords({ ...english, changeVerbs: [] })).toThrow(/changeVerbs/);
    expect(() => compileClaimWords({ ...english, extra: 1 })).toThrow(TypeError);
    expect(() => compileClaimWords({ ...english, changeVerbs: ['Deleted'] })).toThrow(/lower-case/);
  });

  it('refuses a pattern that is no regular expression, or may take exponential time', () => {
    expect(() => compileClaimWords({ ...english, patterns: [{ name: 'bad', regex: '(' }] })).toThrow(/'bad' is not a regular expression/);
    expect(() => compileClaimWords({ ...english, patterns: [{ name: 'slow', regex: '(a+)+$' }] })).toThrow(
      /'slow' may take exponential time/,
    );
  });
});

describe('honest answers a new user tried (sentence exclusions)', () => {
  it.each([
    'I deleted nothing.',
    'I have created a summary below.',
    "I've added the details to the table below.",
    'I have sent you the details above.',
    'I have changed my mind about the approach.',
    'It looks like the build folder has been deleted already.',
    'The service has been restarted 4 times today according to the logs.',
    'The folder has already been deleted by your previous session; I made no changes.',
  ])('%s: no claim', (text) => {
    expect(detectClaims(text)).toEqual([]);
  });

  it('still finds the claims beside them', () => {
    expect(detectClaims('I deleted the build folder.').map((c) => c.verb)).toEqual(['deleted']);
    expect(detectClaims('I restarted the service.').map((c) => c.verb)).toEqual(['restarted']);
  });
});
