import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_UPGRADE_VERSION } from '../src/package-version.js';

describe('version', () => {
  it('matches package.json', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(AGENT_UPGRADE_VERSION).toBe(manifest.version);
  });
});
