// The fake's CEL evaluator and CRD loading: the rules of the shipped CRDs evaluate as CEL defines
// them (errors absorbed by a decisive && or ||, map lists equal whatever their order, integers
// typed as int), and a CRD whose rule, schema keyword or format the fake does not implement is
// refused when the fake starts, never served with that part skipped.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileCel } from '../../support/kube/cel.js';
import {
  loadCrd,
  RELEASE_CRD,
  ROLLOUT_CRD,
  AGENT_RELEASE,
  AGENT_ROLLOUT,
  type Schema,
} from '../../support/kube/crd.js';
import { startFakeApiServer } from '../../support/kube/fake-apiserver.js';
import type { JsonValue } from '../../support/kube/json.js';

const scratch = mkdtempSync(join(tmpdir(), 'fake-cel-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const holds = (rule: string, self: JsonValue, oldSelf?: JsonValue, schema?: Schema): boolean =>
  compileCel(rule).check(self, schema, oldSelf);

describe('the CEL evaluator', () => {
  it('evaluates the operators, macros and functions of the subset', () => {
    const cases: [string, JsonValue, boolean][] = [
      ['[1, 2, 3].map(x, x * 2).filter(y, y > 2) == [4, 6]', null, true],
      ['3 in [1, 2, 3] && !(4 in [1, 2, 3]) && "k" in self', { k: 1 }, true],
      ["'a' + 'b' == 'ab' && 'abc'.startsWith('a') && 'abc'.endsWith('c') && 'abc'.contains('b')", null, true],
      ['-5 / 2 == -2 && 7 % 3 == 1 && 1 == 1.0 && 2u > 1u && int("12") == 12 && string(3) == "3"', null, true],
      ['size(self) == 2 && self.size() == 2 && size("héllo") == 5', [1, 2], true],
      ['self.all(x, x > 0) && self.exists(x, x == 2) && self.exists_one(x, x == 1)', [1, 2], true],
      ['type(self) == int ? self >= 0 : self.matches("^[0-9]+%$")', '10%', true],
      ['type(self) == int ? self >= 0 : self.matches("^[0-9]+%$")', -1, false],
      ['type(self) == string', 1, false],
    ];
    for (const [rule, self, expected] of cases) expect(holds(rule, self), rule).toBe(expected);
  });

  it('fails a rule whose evaluation errs, unless a decisive operand of && or || settles it', () => {
    expect(holds('self.missing == 1', {})).toBe(false);
    expect(holds('self.missing == 1 || true', {})).toBe(true);
    expect(holds('!(false && self.missing == 1)', {})).toBe(true);
    expect(holds('self[5] == 1', [1])).toBe(false);
    expect(holds('self.all(x, x.a == 1)', [{ a: 2 }, {}])).toBe(false);
    expect(holds('self.exists(x, x.a == 1)', [{}, { a: 1 }])).toBe(true);
    expect(holds('9223372036854775807 + 1 > 0', null)).toBe(false);
  });

  it('compares map and set lists whatever their order, atomic lists in order', () => {
    const mapList: Schema = {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['k'],
      items: { type: 'object' },
    };
    const reordered = [
      [{ k: 'b' }, { k: 'a' }],
      [{ k: 'a' }, { k: 'b' }],
    ] as const;
    expect(holds('self == oldSelf', [...reordered[0]], [...reordered[1]], mapList)).toBe(true);
    expect(
      holds('self == oldSelf', [...reordered[0]], [...reordered[1]], { type: 'array', items: { type: 'object' } }),
    ).toBe(false);
    expect(holds('self == oldSelf', [1.0], [1], { type: 'array', items: { type: 'number' } })).toBe(true);
  });

  it('marks the rules that read oldSelf, and refuses what it cannot evaluate, naming the rule', () => {
    expect(compileCel('oldSelf.a == self.a').usesOldSelf).toBe(true);
    expect(compileCel('self.a == 1').usesOldSelf).toBe(false);
    for (const rule of [
      'self.a.lowerAscii() == "a"',
      "{'a': 1} == self",
      'quantity("1") > 0',
      'unknown == 1',
      "self.matches('(?=a)')",
      'self.x.exists(y)',
    ])
      expect(() => compileCel(rule), rule).toThrow(/cannot evaluate the CRD rule/);
  });
});

describe('loading CRDs', () => {
  it('compiles every rule of the shipped AgentRelease and AgentRollout CRDs', () => {
    const counts = [loadCrd(RELEASE_CRD, AGENT_RELEASE), loadCrd(ROLLOUT_CRD, AGENT_ROLLOUT)].map((crd) =>
      [...crd.rules.values()].reduce((total, rules) => total + rules.length, 0),
    );
    expect(counts).toEqual([1, 19]);
  });

  /** The release CRD with `edit` applied to its text, written to the scratch dir. */
  function variant(name: string, edit: (text: string) => string): string {
    const path = join(scratch, `${name}.yaml`);
    writeFileSync(path, edit(readFileSync(RELEASE_CRD, 'utf8')));
    return path;
  }

  const EDITS: readonly [string, RegExp, (text: string) => string][] = [
    [
      'a rule outside the subset',
      /cannot evaluate the CRD rule/,
      (text) => text.replace('self.version == oldSelf.version', 'self.version.lowerAscii() == oldSelf.version'),
    ],
    [
      'a schema keyword it does not implement',
      /does not implement uniqueItems/,
      (text) => text.replace('maxLength: 64', 'maxLength: 64\n                  uniqueItems: true'),
    ],
    [
      'a format it does not implement',
      /does not implement the format uri/,
      (text) => text.replace('format: date-time', 'format: uri'),
    ],
    [
      'a messageExpression',
      /does not implement messageExpression/,
      (text) =>
        text.replace(
          'message: "a release is immutable',
          'messageExpression: "\'x\'"\n                  message: "a release is immutable',
        ),
    ],
    [
      'a transition rule below an atomic list',
      /cannot correlate the transition rule/,
      (text) =>
        text
          .replace(
            'required: [arch, downloadURL, sha256]',
            'required: [arch, downloadURL, sha256]\n                    x-kubernetes-validations: [{rule: "self.arch == oldSelf.arch"}]',
          )
          .replace(
            'x-kubernetes-list-type: map\n                  x-kubernetes-list-map-keys: [arch]\n                  ',
            '',
          ),
    ],
  ];

  it.each(EDITS)('refuses at start a CRD with %s', async (what, why, edit) => {
    const path = variant(what.replace(/\W+/g, '-'), edit);
    await expect(startFakeApiServer({ releaseCrdPath: path })).rejects.toThrow(why);
  });
});
