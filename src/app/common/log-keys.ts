/** Shared structured-log field names, so every component logs the same fact under one key. */
export const LogKeys = {
  action: 'action',
  path: 'path',
  slot: 'slot',
  from: 'from',
  to: 'to',
  code: 'code',
  operation: 'operation',
  url: 'url',
  digest: 'digest',
  error: 'err',
  component: 'component',
  /** A health probe's target as it may be printed (no URL query, no arguments). */
  probe: 'probe',
} as const;
