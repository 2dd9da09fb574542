// Signed introspection answers believed once (RFC 9701 answers do not name the token they describe): each answer
// believed is remembered by its hash for as long as it could be believed, so it is never believed about another token.
import { createHash } from 'node:crypto';

/** Most signed answers remembered at once; past it the oldest is forgotten first (docs/introspection.md). */
export const MAX_REMEMBERED_ANSWERS = 10_000;

/** SHA-256 of a text, base64url: an answer or a token is never kept, only this. */
export function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

/**
 * The signed answers believed within their window, by hash, each with the hash of the token it was believed about.
 * Bounded in count; an entry leaves when its answer could no longer be believed anyway (too old by its `iat`).
 */
export class AnswerMemory {
  private readonly believed = new Map<string, { token: string; until: number }>();

  constructor(private readonly max = MAX_REMEMBERED_ANSWERS) {}

  /**
   * Believe the answer of digest `answer` about the token of digest `token` (times in seconds): true, and it is
   * remembered until `until`, when it was never believed or only about this same token (asked again); false when
   * it was believed about another token within its window: a replay.
   */
  claim(answer: string, token: string, until: number, now: number): boolean {
    this.forgetBefore(now);
    const known = this.believed.get(answer);
    if (known !== undefined && known.until > now) return known.token === token;
    if (this.believed.size >= this.max) {
      const oldest = this.believed.keys().next();
      if (oldest.done !== true) this.believed.delete(oldest.value);
    }
    this.believed.set(answer, { token, until });
    return true;
  }

  /** Answers remembered now. */
  get size(): number {
    return this.believed.size;
  }

  /** Forget, oldest first, the answers that could no longer be believed at `now`. */
  private forgetBefore(now: number): void {
    for (const [answer, entry] of this.believed) {
      if (entry.until > now) return;
      this.believed.delete(answer);
    }
  }
}
