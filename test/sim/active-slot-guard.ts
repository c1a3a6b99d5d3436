import type { MemoryFileSystem } from '../../src/adapters/node/memory/memory-file-system.js';
import { InvariantViolation } from '../../src/domain/common/invariant.js';
import { LAYOUT, resolveInSnapshot } from './host-invariants.js';

/**
 * I3 (docs/protocol.md#i3) enforced as it happens: no op may replace or unlink the slot that
 * current names at that moment. Cheap enough to run on every op of long simulations: the tree is
 * only resolved when an op renames over or unlinks one of the two slot paths, the only ops that
 * could write the active slot.
 */
export function guardActiveSlot(fs: MemoryFileSystem): void {
  fs.beforeMutation((op) => {
    if (op.op !== 'rename' && op.op !== 'unlink') return;
    if (op.path !== LAYOUT.blue && op.path !== LAYOUT.green) return;
    if (resolveInSnapshot(fs.snapshot(), LAYOUT.current) === op.path)
      throw new InvariantViolation(`I3: ${op.op} of the active slot ${op.path}`);
  });
}
