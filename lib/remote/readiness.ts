// `auth.ready()`: resolves once the first token need not wait on a remote call (keys loaded, discovery and
// introspection metadata read); a failure rejects, and is retried behind the caller, one attempt per cooldown.
import { asTokenAuthError, type TokenAuthError } from '../base/errors';
import type { TokenSource } from './source';

/** The readiness of a TokenAuth's token sources. */
export interface Readiness {
  /** Load what the sources need; resolves at once when nothing is missing (or nothing is ever loaded). */
  ready(): Promise<void>;
  /** Stop retrying. */
  close(): void;
}

/** When the next attempt may run: the failure's `Retry-After` (the cooldown's end), at least one second. */
function retryDelay(err: TokenAuthError): number {
  const seconds = Number(err.headers['Retry-After']);
  return (Number.isFinite(seconds) && seconds >= 1 ? seconds : 30) * 1000;
}

/**
 * Readiness over `sources` (those without `ready` need nothing). After a failure one timer (unref'd: it never
 * holds the process) tries again when the cooldown allows, until an attempt succeeds or `close()`; the sources'
 * own cooldowns and shared fetches bound what any number of `ready()` calls cost the servers.
 */
export function createReadiness(sources: readonly TokenSource[]): Readiness {
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  function retryLater(err: TokenAuthError): void {
    if (closed || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      ready().catch(() => undefined);
    }, retryDelay(err));
    timer.unref();
  }

  function ready(): Promise<void> {
    return Promise.all(sources.map((source) => source.ready?.())).then(
      () => undefined,
      (err: unknown) => {
        const error = asTokenAuthError(err);
        retryLater(error);
        throw error;
      },
    );
  }

  return {
    ready,
    close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
