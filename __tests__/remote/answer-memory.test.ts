/** Signed answers believed once (remote/answer-memory.ts): by hash, within their window, bounded in count. */
import { AnswerMemory, digestOf, MAX_REMEMBERED_ANSWERS } from '../../lib/remote/answer-memory';

describe('AnswerMemory', () => {
  it('believes an answer about one token only, within its window', () => {
    const memory = new AnswerMemory();
    expect(memory.claim('answer', 'token-a', 110, 100)).toBe(true);
    // The same token asked about again: the same answer may come back.
    expect(memory.claim('answer', 'token-a', 110, 105)).toBe(true);
    // Another token: a replay.
    expect(memory.claim('answer', 'token-b', 110, 109)).toBe(false);
    // Past its window it could not be believed anyway (too old by its iat), so it is forgotten.
    expect(memory.claim('answer', 'token-b', 120, 110)).toBe(true);
  });

  it('forgets answers once their window has passed, oldest first', () => {
    const memory = new AnswerMemory();
    for (let i = 0; i < 5; i++) memory.claim(`answer-${i}`, 'token', 100 + i, 90);
    expect(memory.size).toBe(5);
    // At 103 only the answer believable until 104 is left, beside the new one.
    memory.claim('answer-new', 'token', 200, 103);
    expect(memory.size).toBe(2);
  });

  it(`holds at most its bound (${MAX_REMEMBERED_ANSWERS} by default), forgetting the oldest first`, () => {
    const memory = new AnswerMemory(3);
    for (let i = 0; i < 4; i++) expect(memory.claim(`answer-${i}`, `token-${i}`, 1_000, 0)).toBe(true);
    expect(memory.size).toBe(3);
    expect(memory.claim('answer-0', 'token-x', 1_000, 0)).toBe(true);
    expect(memory.claim('answer-3', 'token-x', 1_000, 0)).toBe(false);
  });

  it('keeps digests, never the text: SHA-256, base64url', () => {
    expect(digestOf('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
  });
});
