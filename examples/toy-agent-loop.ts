/**
 * A toy agent loop on the session guard, the kind of loop
 * `pulse-safety-fsm/testing` is for: its test
 * (examples/toy-agent-loop.paths.test.ts, shipped in the package and run by
 * test/examples/toy-agent-loop.test.ts) replays every generated path of the
 * safety machine through it and checks, at every step, that the loop lets
 * through exactly what the machine allows.
 *
 * The loop stands between a model and its tools. The model asks for tool
 * calls (`requestTool`), possibly several at once; each is checked by the
 * gate before it runs, and a refused one is answered at once with the
 * structured `FSM_BLOCKED` tool result, so the model can branch on the code.
 * Tools report their output later (`finishTool`); as in the tau-bench
 * trajectories, an output that starts with `Error` is a failed call. The
 * model's final answer (`answer`) is delivered only if the gate allows it;
 * otherwise the model gets the refusal instead. Clearing the conversation
 * resets the session, fully or keeping pinned items (`clearContext`).
 *
 * In your own code import from `pulse-safety-fsm` rather than `../src/index.js`.
 */
import {
  createSessionGuard,
  type BlockedToolResult,
  type PendingRecovery,
  type SessionGuard,
  type SessionGuardOptions,
  type ToolKind,
} from '../src/index.js';

/** A message the loop sends to the model (or, for `user`, to the user). */
export type ToyMessage =
  { role: 'tool'; callId: string; name: string; content: string } | { role: 'user'; content: string } | { role: 'system'; content: string };

/** A tool call as the model asks for it. `kind`, when given, skips classification. */
export interface ToyToolCall {
  id: string;
  name: string;
  args?: unknown;
  kind?: ToolKind;
}

/** What became of a requested call: started, or refused with the tool result sent to the model. */
export type ToyRequestResult = { started: true } | { started: false; result: BlockedToolResult };

/** Options of the toy loop: the guard's, e.g. its clock (`now`, epoch ms) and `strictFailedWrites`. */
export type ToyAgentLoopOptions = Omit<SessionGuardOptions, 'snapshot'>;

/**
 * A minimal agent loop: the gate decides, the loop enforces, and every
 * decision reaches the model as a message in `transcript`.
 */
export class ToyAgentLoop {
  /** The session's safety gate. */
  readonly guard: SessionGuard;
  /** Everything sent to the model or the user, oldest first. */
  readonly transcript: ToyMessage[] = [];
  /** Calls admitted by the gate and not finished yet, by call id. */
  private readonly running = new Map<string, ToyToolCall>();

  constructor(options: ToyAgentLoopOptions = {}) {
    this.guard = createSessionGuard(options);
  }

  /**
   * The model asks for a tool call. An admitted call starts running; a
   * refused one never runs, and its `FSM_BLOCKED` result goes to the model.
   * @throws Error when a call with this id is already running (a loop bug, not a model one).
   */
  requestTool(call: ToyToolCall): ToyRequestResult {
    if (this.running.has(call.id)) throw new Error(`tool call ${call.id} is already running`);
    const decision = this.guard.check(call);
    if (!decision.allowed) {
      const result = decision.error.toToolResult();
      this.transcript.push({ role: 'tool', callId: call.id, name: call.name, content: JSON.stringify(result) });
      return { started: false, result };
    }
    this.running.set(call.id, call);
    return { started: true };
  }

  /**
   * A running call's tool returned `output` (a string starting with `Error`
   * is a failure): the outcome is recorded, the output goes to the model,
   * and a cleared pending recovery is returned.
   * @throws Error when no call with this id is running.
   */
  finishTool(id: string, output: string): { recovered?: PendingRecovery } {
    const call = this.running.get(id);
    if (call === undefined) throw new Error(`no tool call ${id} is running`);
    this.running.delete(id);
    const result = this.guard.record(call, output.startsWith('Error') ? 'error' : 'success');
    this.transcript.push({ role: 'tool', callId: id, name: call.name, content: output });
    return result;
  }

  /**
   * The model's final answer: delivered to the user if the gate allows it;
   * otherwise the refusal goes back to the model and the answer is dropped.
   */
  answer(text: string): { delivered: boolean } {
    const decision = this.guard.finalAnswer();
    if (!decision.allowed) {
      this.transcript.push({ role: 'system', content: JSON.stringify(decision.error.toToolResult()) });
      return { delivered: false };
    }
    this.transcript.push({ role: 'user', content: text });
    return { delivered: true };
  }

  /**
   * The conversation is cleared: the session is reset, or with `keepPinned`
   * reset keeping its progress. Calls still running are forgotten; their
   * outputs, if they come, are dropped.
   */
  clearContext(options: { keepPinned: boolean }): void {
    this.running.clear();
    if (options.keepPinned) this.guard.resetKeepProgress();
    else this.guard.reset();
  }

  /** Ids of the calls running now. */
  get runningCalls(): string[] {
    return [...this.running.keys()];
  }
}
