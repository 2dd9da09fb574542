// What the security event receiver says about each SET and logout token it handles: one diagnostics channel
// message and one NODE_DEBUG line each (event type, subject format, outcome); never a token, a SET or a secret.
import * as diagnostics from 'node:diagnostics_channel';
import { debuglog } from 'node:util';
import { quoted } from '../base/printable';

/** Name of the channel that carries one message per SET or logout token handled. */
export const SECURITY_EVENT_CHANNEL = 'express-verified-user:security-event';

/** The message published per SET or logout token: facts only, safe in a log. */
export interface SecurityEventMessage {
  /** `push`, `poll` or `logout` (Back-Channel Logout). */
  via: 'push' | 'poll' | 'logout';
  /** The configured transmitter's (or OP's) issuer: configuration, never taken from an unverified token. */
  transmitter: string;
  /**
   * `applied` (rules stored), `no-rule`, `ignored`, `subject-unmapped`, `replayed`, `verified`, `verification`,
   * `stream-updated`, `refused`, `unavailable`.
   */
  outcome: string;
  /** The event type URI, once the SET's signature was verified. */
  eventType?: string;
  /** The subject's format (`iss_sub`, `complex(user,session)`, `sid`), once verified. */
  subjectFormat?: string;
  /** Why it was refused or left unstored (`set-signature`, `revocation-store-full`), for logs. */
  reason?: string;
  /** Rules stored. */
  rules: number;
}

const channel = diagnostics.channel(SECURITY_EVENT_CHANNEL);
const log = debuglog('express-verified-user');

/** Publish one message, and write its NODE_DEBUG line; building nothing when nobody listens and debug is off. */
export function publishSecurityEvent(build: () => SecurityEventMessage): void {
  if (!channel.hasSubscribers && !log.enabled) return;
  const message = build();
  if (channel.hasSubscribers) channel.publish(message);
  if (!log.enabled) return;
  log(
    'security-event %s via=%s transmitter=%s type=%s subject=%s reason=%s rules=%d',
    message.outcome,
    message.via,
    quoted(message.transmitter),
    message.eventType === undefined ? '-' : quoted(message.eventType),
    message.subjectFormat === undefined ? '-' : quoted(message.subjectFormat),
    message.reason ?? '-',
    message.rules,
  );
}
