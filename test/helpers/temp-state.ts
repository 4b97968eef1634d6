/** A builder state database in a temporary directory of its own, closed and removed at teardown. */
import type { Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openState, type StateDb } from '../../builder/state.js';

export function openTempState(t: Test, prefix: string): { dir: string; db: StateDb } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const db = openState(path.join(dir, 'state'));
  t.teardown(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { dir, db };
}
