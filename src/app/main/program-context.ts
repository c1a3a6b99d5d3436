import type { FleetCliContext } from '../fleet/cli/fleet-cli-context.js';
import type { NodeCliContext } from '../node/cli/node-cli-context.js';

/** The one CLI runs both contexts' commands: its context serves each what it needs. */
export type ProgramContext = NodeCliContext & FleetCliContext;
