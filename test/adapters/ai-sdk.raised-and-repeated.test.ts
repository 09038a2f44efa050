/**
 * The AI SDK adapter and issue 28, on the real `ai` loop with the SDK's
 * `MockLanguageModelV4` (recorded through `recordCall`, as every adapter):
 * the duplicate-charge incident (a `charge_card` that failed behind a
 * `ReadTimeout` inside the framework's retries, then sent again by the
 * model with the same arguments) is refused as `repeated-write`, strict or
 * not; and a tool result carrying the catalog's recoverable code
 * `STRICT_RESOLUTION` opens a pending recovery of its tool, cleared by its
 * next successful call.
 */
import { generateText, isStepCount, jsonSchema, tool, type JSONSchema7, type ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { withSafetyGate } from '../../src/adapters/ai-sdk.js';
import type { PendingRecovery } from '../../machines/safety.types.js';
import { call, generating, guardWithClock, say, seen, type Part } from './ai-sdk.script.js';

const payments = {
  name: 'payments',
  recoveryCodes: ['STRICT_RESOLUTION'],
  tools: {
    get_customer: { kind: 'resolve', targets: { customer_id: 'id' } },
    charge_card: { kind: 'write', targets: { customer_id: 'id' } },
  },
} as const;

const STRICT = { ok: false, error: { code: 'STRICT_RESOLUTION', message: "customer 'Acme' is not resolved: look it up by id first" } };

/** The billing tools: `charge_card` throws a ReadTimeout (the charge may have gone through) for the ids in `timesOut`. */
function billingTools(charged: unknown[], timesOut: string[]) {
  const object = (properties: NonNullable<JSONSchema7['properties']>) =>
    jsonSchema<Record<string, unknown>>({ type: 'object', properties });
  return {
    get_customer: tool({
      description: 'Look a customer up',
      inputSchema: object({ customer_id: { type: 'string' } }),
      execute: async ({ customer_id }) => ({ id: customer_id, name: 'Acme Ltd' }),
    }),
    charge_card: tool({
      description: "Charge the customer's default card",
      inputSchema: object({ customer_id: { type: 'string' }, amount_cents: { type: 'number' }, currency: { type: 'string' } }),
      execute: async (input, { toolCallId }) => {
        charged.push(input);
        if (input.customer_id === 'Acme') return STRICT;
        if (timesOut.includes(toolCallId))
          throw new Error("ReadTimeout: HTTPSConnectionPool(host='api.payments.example'): Read timed out.");
        return { id: `ch_${charged.length}`, status: 'succeeded' };
      },
    }),
  };
}

/** Plays the script on generateText with the gate; what was charged, the session, the answer, what the model saw. */
async function play(script: Part[][], options: { timesOut?: string[]; strictFailedWrites?: boolean; withCatalog?: boolean } = {}) {
  const charged: unknown[] = [];
  const recovered: PendingRecovery[] = [];
  const guard = guardWithClock({ onRecovery: (event) => recovered.push(event.recovery) });
  const model = generating(script);
  const gated = withSafetyGate({
    model,
    prompt: 'Charge cus_42 the 49.00 USD renewal.',
    stopWhen: isStepCount(script.length),
    tools: billingTools(charged, options.timesOut ?? []),
    guard,
    ...(options.withCatalog === false
      ? { kinds: { get_customer: 'resolve', charge_card: 'write' } as const }
      : { catalog: payments as unknown as Parameters<typeof withSafetyGate>[0]['catalog'] }),
    ...(options.strictFailedWrites === undefined ? {} : { strictFailedWrites: options.strictFailedWrites }),
  });
  await generateText(gated);
  const toolResult = (id: string) =>
    seen(model.doGenerateCalls.at(-1)!.prompt as ModelMessage[]).find((line) => line.startsWith(`tool ${id}:`));
  return { charged, recovered, guard, gated, toolResult };
}

const lookup = (id: string, customer = 'cus_42') => call(id, 'get_customer', { customer_id: customer });
const charge = (id: string, input: Record<string, unknown> = { customer_id: 'cus_42', amount_cents: 4900, currency: 'usd' }) =>
  call(id, 'charge_card', input);

describe('the duplicate-charge incident (issue 28 item 3)', () => {
  for (const strictFailedWrites of [true, false]) {
    it(`refuses the charge sent again after a ReadTimeout, in another key order (strictFailedWrites ${strictFailedWrites})`, async () => {
      const { charged, toolResult, guard } = await play(
        [[lookup('c0')], [charge('c1')], [charge('c2', { currency: 'usd', amount_cents: 4900, customer_id: 'cus_42' })], [say('Charged.')]],
        { timesOut: ['c1'], strictFailedWrites },
      );
      expect(charged).toHaveLength(1); // the retry never reached the payment provider
      expect(toolResult('c2')).toContain('"rule":"repeated-write"');
      expect(toolResult('c2')).toContain('customer_id=cus_42');
      expect(guard.context.failedWrites?.map((f) => f.tool)).toEqual(['charge_card']);
    });
  }

  it('lets the charge run again once the customer was looked at', async () => {
    const { charged, toolResult } = await play([[lookup('c0')], [charge('c1')], [lookup('c2')], [charge('c3')], [say('Charged.')]], {
      timesOut: ['c1'],
      strictFailedWrites: false,
    });
    expect(charged).toHaveLength(2);
    expect(toolResult('c3')).not.toContain('FSM_BLOCKED');
  });
});

describe('a recoverable code a tool raised (issue 28 item 1)', () => {
  it("opens a pending recovery of the tool for the catalog's STRICT_RESOLUTION, which its next successful call clears", async () => {
    // The model looked the customer up by name, and charges the name: the provider wants a resolved id.
    const byName = [[lookup('c0', 'Acme')], [charge('c1', { customer_id: 'Acme', amount_cents: 4900 })]];
    const { guard, recovered } = await play([...byName, [say('Retrying.')]], { strictFailedWrites: false });
    expect(guard.context.pendingRecoveries).toEqual({
      'STRICT_RESOLUTION:charge_card': expect.objectContaining({ errorCode: 'STRICT_RESOLUTION', tool: 'charge_card', attempts: 1 }),
    });
    expect(recovered).toEqual([]);
    const after = await play([...byName, [lookup('c2')], [charge('c3')], [say('Charged.')]], { strictFailedWrites: false });
    expect(after.recovered).toMatchObject([{ errorCode: 'STRICT_RESOLUTION', tool: 'charge_card' }]);
    expect(after.guard.context.pendingRecoveries).toEqual({});
  });

  it("without a catalog, the guard's own recoveryCodes (the Pulse catalog's) read the result", async () => {
    const { guard } = await play([[lookup('c0')], [charge('c1', { customer_id: 'Acme' })], [say('Retrying.')]], { withCatalog: false });
    expect(Object.keys(guard.context.pendingRecoveries)).toEqual(['STRICT_RESOLUTION:charge_card']);
  });
});
