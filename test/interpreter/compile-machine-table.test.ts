/**
 * The compiler half of the interpreter (src/interpreter/compile-machine-table.ts):
 * the table it reads from a machine is plain data, the same for the same
 * machine and logic, so it is pinned here as a snapshot.
 */
import { describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { safetyActionLogic } from '../../machines/safety.actions.js';
import { safetyMachine } from '../../machines/safety.machine.js';
import { compileMachineTable } from '../../src/interpreter/index.js';

const toggle = setup({
  types: { context: {} as { n: number }, events: {} as { type: 'flip' } | { type: 'reset' } },
  guards: { isOn: ({ context }) => context.n > 0 },
  actions: { bump: assign(({ context }) => ({ n: context.n + 1 })), clear: assign({ n: 0 }) },
}).createMachine({
  id: 'toggle',
  context: { n: 0 },
  initial: 'off',
  on: { reset: { target: '.off', actions: 'clear' } },
  states: {
    off: { on: { flip: { target: 'on', actions: [{ type: 'bump', params: { by: 1 } }] } } },
    on: { on: { flip: 'off' }, always: { guard: 'isOn', actions: 'bump' } },
  },
});
const logic = {
  bump: (context: { n: number }) => ({ context: { n: context.n + 1 } }),
  clear: () => ({ context: { n: 0 } }),
};

describe('compileMachineTable', () => {
  it("reads a machine into its table: each state's transitions, then the root's", () => {
    expect(compileMachineTable(toggle, logic)).toMatchInlineSnapshot(`
      {
        "byState": Map {
          "off" => {
            "always": [],
            "on": Map {
              "flip" => [
                {
                  "actions": [
                    {
                      "logic": [Function],
                      "name": "bump",
                      "params": {
                        "by": 1,
                      },
                    },
                  ],
                  "guard": null,
                  "guardName": null,
                  "guardParams": undefined,
                  "source": "toggle.off",
                  "target": "on",
                },
              ],
              "reset" => [
                {
                  "actions": [
                    {
                      "logic": [Function],
                      "name": "clear",
                      "params": undefined,
                    },
                  ],
                  "guard": null,
                  "guardName": null,
                  "guardParams": undefined,
                  "source": "toggle",
                  "target": "off",
                },
              ],
            },
          },
          "on" => {
            "always": [
              {
                "actions": [
                  {
                    "logic": [Function],
                    "name": "bump",
                    "params": undefined,
                  },
                ],
                "guard": [Function],
                "guardName": "isOn",
                "guardParams": undefined,
                "source": "toggle.on",
                "target": null,
              },
            ],
            "on": Map {
              "flip" => [
                {
                  "actions": [],
                  "guard": null,
                  "guardName": null,
                  "guardParams": undefined,
                  "source": "toggle.on",
                  "target": "off",
                },
              ],
              "reset" => [
                {
                  "actions": [
                    {
                      "logic": [Function],
                      "name": "clear",
                      "params": undefined,
                    },
                  ],
                  "guard": null,
                  "guardName": null,
                  "guardParams": undefined,
                  "source": "toggle",
                  "target": "off",
                },
              ],
            },
          },
        },
        "context": {
          "n": 0,
        },
        "id": "toggle",
        "initialValue": "off",
        "states": [
          "off",
          "on",
        ],
      }
    `);
  });

  it('gives the same table for the same machine and logic', () => {
    expect(compileMachineTable(safetyMachine, safetyActionLogic)).toEqual(compileMachineTable(safetyMachine, safetyActionLogic));
  });
});
