/**
 * Charts of the project's statecharts, drawn from the machines themselves:
 * a flat chart model (chart-model.ts), the machine config as JSON (what
 * XState's `createMachine` accepts, machine-config.ts), Graphviz DOT
 * (dot.ts), Mermaid `stateDiagram-v2` (mermaid.ts), SVG rendered offline
 * with `@viz-js/viz` (svg.ts), and `exportCharts`, which writes them for
 * every machine listed in `stately.config.json` (stately-config.ts; the
 * `pulse-safety export` command, src/cli/commands/export.ts).
 * The README ("Exported charts") says which tool reads which file; docs/charts.md has the details.
 *
 * The chart builders are pure functions of a machine; the visualizer and the
 * README drift test reuse them, so every picture of the machine comes from
 * the same code.
 *
 * Spec: ASSISTANT_SAFETY.md "States" (what the chart shows); every state and
 * transition carries the machine's own `description`.
 *
 * This index re-exports what the rest of the code and the tests use; the
 * types and the config schema the charts use among themselves stay in their
 * own modules.
 */
export {
  chartOf,
  REFUSAL_MARK,
  REFUSING_ACTIONS,
  stateElementId,
  transitionIds,
  type Chart,
} from './chart-model.js';
export { toMachineConfig, type MachineConfigJson } from './machine-config.js';
export { toDot } from './dot.js';
export { toMermaid } from './mermaid.js';
export { renderSvg } from './svg.js';
export {
  CHART_EXTENSIONS,
  chartsOf,
  exportCharts,
  loadConfiguredMachine,
  machineModuleFile,
  PACKAGE_ROOT,
  readStatelyConfig,
} from './stately-config.js';
