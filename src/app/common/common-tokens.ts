import type { ServiceIdentifier } from 'inversify';
import type { Clock } from '../../ports/common/clock.js';
import type { Logger } from '../../ports/common/logger.js';

/** The identifiers both processes bind: the node's `Tokens` and the fleet's `FleetTokens` reuse them. */
export const CommonTokens = Object.freeze({
  Logger: Symbol('Logger') as ServiceIdentifier<Logger>,
  Clock: Symbol('Clock') as ServiceIdentifier<Clock>,
});
