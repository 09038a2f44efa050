/**
 * The visualizer page's HTML and CSS, served by the visualizer server. Kept
 * as strings in a module so the TypeScript build ships them with no copy
 * step. Every control has a label; the layout collapses to one column on a
 * narrow window. Nothing here refers to another origin.
 */

/** The page: static structure; `/assets/main.js` fills it in. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pulse-safety visualizer</title>
<link rel="stylesheet" href="/assets/visualizer.css">
<script type="module" src="/assets/main.js"></script>
</head>
<body>
<a class="skip" href="#controls">Skip to the controls</a>
<header>
  <div>
    <h1>pulse-safety visualizer</h1>
    <p class="sub">The assistant safety statechart, drawn from the machine, running offline.</p>
  </div>
  <div role="tablist" aria-label="Mode" id="modes">
    <button type="button" role="tab" id="tab-playground" aria-controls="panel-playground" aria-selected="true">Playground</button>
    <button type="button" role="tab" id="tab-replay" aria-controls="panel-replay" aria-selected="false" tabindex="-1">Replay</button>
    <button type="button" role="tab" id="tab-live" aria-controls="panel-live" aria-selected="false" tabindex="-1">Live</button>
  </div>
</header>
<main>
  <section id="chart-section" aria-labelledby="chart-title">
    <div class="section-head">
      <h2 id="chart-title">Chart <span class="muted" id="chart-machine"></span></h2>
      <div class="chart-options">
        <div class="zoom" role="group" aria-label="Zoom the chart">
          <button type="button" id="zoom-out" aria-label="Zoom out" aria-keyshortcuts="-">−</button>
          <button type="button" id="zoom-fit" aria-pressed="true" aria-keyshortcuts="0" title="Fit the whole chart in the window">Fit</button>
          <button type="button" id="zoom-in" aria-label="Zoom in" aria-keyshortcuts="+">+</button>
          <span id="zoom-level" class="muted" aria-live="polite">fit</span>
        </div>
        <label class="inline"><input type="checkbox" id="chart-descriptions"> Show transition descriptions</label>
      </div>
    </div>
    <p id="status-line" aria-live="polite">State: <strong id="current-state">…</strong> <span id="session-clock" class="muted"></span></p>
    <p id="zoom-help" class="muted hint">Zoom: the buttons, + and − (0 fits) with the chart focused, or Ctrl and the mouse wheel. Pan: drag the chart, scroll, or the arrow keys.</p>
    <div id="chart" class="fit" tabindex="0" aria-describedby="zoom-help enabled-title">Loading the chart…</div>
    <ul class="legend" aria-label="Legend">
      <li><span class="swatch current"></span> current state</li>
      <li><span class="swatch enabled"></span> transition enabled now</li>
      <li><span class="swatch taken"></span> taken by the last event</li>
    </ul>
    <h3 id="enabled-title">Transitions enabled now</h3>
    <ul id="enabled-list" class="compact"></ul>
  </section>
  <section id="controls" aria-label="Controls" tabindex="-1">
    <div role="tabpanel" id="panel-playground" aria-labelledby="tab-playground">
      <form id="call-form" novalidate>
        <fieldset>
          <legend>Tool call</legend>
          <div class="row">
            <label for="call-catalog">Catalog</label>
            <select id="call-catalog"></select>
          </div>
          <div class="examples" role="group" aria-label="Fill in an example call of a kind" id="examples"></div>
          <div class="row">
            <label for="call-name">Tool name</label>
            <input id="call-name" list="tool-names" autocomplete="off" spellcheck="false" required>
            <datalist id="tool-names"></datalist>
          </div>
          <div class="row">
            <label for="call-args">Arguments (JSON)</label>
            <textarea id="call-args" rows="2" spellcheck="false">{}</textarea>
          </div>
          <button type="submit" id="call-check">Check the call</button>
          <p id="call-error" class="error" role="alert"></p>
        </fieldset>
      </form>
      <fieldset>
        <legend>Calls in flight</legend>
        <p id="in-flight-empty" class="muted">None: a checked call that was allowed waits here for its outcome.</p>
        <ul id="in-flight-controls" class="plain"></ul>
      </fieldset>
      <fieldset>
        <legend>Session</legend>
        <div class="buttons">
          <button type="button" id="btn-answer">Final answer</button>
          <button type="button" id="btn-complete">Complete verification</button>
          <button type="button" id="btn-reset">Reset</button>
          <button type="button" id="btn-reset-keep">Reset keeping progress</button>
          <button type="button" id="btn-clock">Advance clock 10 min</button>
        </div>
        <details>
          <summary>New session…</summary>
          <div class="row">
            <label for="new-catalog">Default catalog</label>
            <select id="new-catalog"></select>
          </div>
          <label class="inline"><input type="checkbox" id="new-auto" checked> Complete verification automatically after a verifying read</label>
          <label class="inline"><input type="checkbox" id="new-strict"> Strict failed writes (a failed write needs verification)</label>
          <button type="button" id="btn-new">Start a new session</button>
        </details>
        <p id="session-error" class="error" role="alert"></p>
      </fieldset>
    </div>
    <div role="tabpanel" id="panel-replay" aria-labelledby="tab-replay" hidden>
      <fieldset>
        <legend>Transcript</legend>
        <div class="buttons">
          <button type="button" id="replay-demo">Load the embedded demo</button>
        </div>
        <div class="row">
          <label for="replay-file">Open a transcript file</label>
          <input type="file" id="replay-file" accept=".json,.jsonl,.ndjson,.txt,application/json" aria-describedby="replay-formats">
        </div>
        <p id="replay-formats" class="muted"></p>
        <div class="row">
          <label for="replay-catalog">Classify with catalog</label>
          <select id="replay-catalog"></select>
        </div>
        <div class="row">
          <label for="replay-catalog-file">Open a catalog file</label>
          <input type="file" id="replay-catalog-file" accept=".json,application/json">
        </div>
        <div class="row">
          <label for="replay-policy">Policy</label>
          <select id="replay-policy"></select>
        </div>
        <label class="inline"><input type="checkbox" id="replay-strict"> Strict failed writes (a failed write needs verification)</label>
        <p id="replay-source" class="muted"></p>
        <p id="replay-catalog-choice" class="muted"></p>
        <p id="replay-warning" class="muted"></p>
        <p id="replay-error" class="error" role="alert"></p>
        <div class="row">
          <label for="replay-run">Run</label>
          <select id="replay-run" disabled></select>
        </div>
        <details id="replay-all-refusals">
          <summary id="replay-refusal-count">No refusals.</summary>
          <ol id="replay-refusal-list"></ol>
        </details>
      </fieldset>
      <fieldset>
        <legend>Playback</legend>
        <div class="buttons" role="group" aria-label="Playback">
          <button type="button" id="replay-first" aria-label="First step" disabled>|◀ First</button>
          <button type="button" id="replay-back" aria-label="Step back" disabled>◀ Back</button>
          <button type="button" id="replay-play" aria-pressed="false" disabled>▶ Play</button>
          <button type="button" id="replay-forward" aria-label="Step forward" disabled>Forward ▶</button>
          <button type="button" id="replay-last" aria-label="Last step" disabled>Last ▶|</button>
        </div>
        <div class="row">
          <label for="replay-speed">Speed</label>
          <select id="replay-speed">
            <option value="1500">slow (1.5 s a step)</option>
            <option value="700" selected>normal (0.7 s a step)</option>
            <option value="250">fast (0.25 s a step)</option>
            <option value="100">fastest (0.1 s a step)</option>
          </select>
        </div>
        <p id="replay-position" aria-live="polite">No transcript loaded.</p>
        <p id="replay-refusals"></p>
      </fieldset>
      <h3 id="timeline-title">Timeline</h3>
      <p class="muted">Steps the audit refuses are marked ✗. Arrow keys move along the timeline.</p>
      <p id="timeline-page" class="muted" aria-live="polite"></p>
      <ol id="timeline" aria-labelledby="timeline-title"></ol>
    </div>
    <div role="tabpanel" id="panel-live" aria-labelledby="tab-live" hidden>
      <p>An application streams its actor here with <code>@statelyai/inspect</code>:
        <code>createWebSocketInspector({ url: '<span id="inspect-url"></span>' })</code>.</p>
      <p id="hooks-directory" hidden>Coding agents' hook sessions from <code id="hooks-path"></code> are listed too, each as its agent, its session id and directory.</p>
      <p id="live-status" class="muted">Connecting…</p>
      <h3 id="live-title">Sessions</h3>
      <p id="live-empty" class="muted">No session has streamed yet.</p>
      <ul id="live-sessions" class="plain" aria-labelledby="live-title"></ul>
      <div id="hook-info" hidden>
        <h3 id="hook-info-title">Hook session</h3>
        <p id="hook-unreadable" class="error" role="alert" hidden></p>
        <dl id="hook-fields" aria-labelledby="hook-info-title"></dl>
        <h4 id="hook-calls-title">Calls waiting for their outcome</h4>
        <p id="hook-calls-none" class="muted">None.</p>
        <ul id="hook-calls" class="compact" aria-labelledby="hook-calls-title"></ul>
      </div>
    </div>
  </section>
  <section id="context-section" aria-labelledby="context-title">
    <h2 id="context-title">Context</h2>
    <dl id="context-flags"></dl>
    <h3>Pending recoveries</h3>
    <p id="recoveries-empty" class="muted">None.</p>
    <div class="scroll"><table id="recoveries" hidden>
      <caption class="visually-hidden">Pending recoveries</caption>
      <thead><tr><th scope="col">Tool</th><th scope="col">Attempts</th><th scope="col">Last blocked</th><th scope="col">Expires in</th></tr></thead>
      <tbody></tbody>
    </table></div>
    <h3>Calls in flight</h3>
    <p id="in-flight-none" class="muted">None.</p>
    <ul id="in-flight" class="compact"></ul>
  </section>
  <section id="log-section" aria-labelledby="log-title">
    <h2 id="log-title">Event log <span class="muted">(newest first)</span></h2>
    <ol id="log" reversed></ol>
  </section>
</main>
</body>
</html>
`;

/** The page's stylesheet. */
export const PAGE_CSS = `:root {
  color-scheme: light;
  --fg: #1f2328; --muted: #57606a; --line: #d0d7de; --bg: #ffffff; --panel: #f6f8fa;
  --current: #0969da; --current-bg: #ddf4ff; --enabled: #1a7f37; --enabled-bg: #dafbe1;
  --taken: #bf8700; --taken-bg: #fff8c5; --blocked: #cf222e; --blocked-bg: #ffebe9;
  font-family: "DejaVu Sans", Verdana, system-ui, sans-serif; font-size: 15px; color: var(--fg); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 8px; top: 8px; background: var(--bg); padding: 4px 8px; z-index: 10; }
header { display: flex; flex-wrap: wrap; gap: 8px 24px; align-items: end; justify-content: space-between; padding: 12px 16px; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.3rem; margin: 0; }
h2 { font-size: 1.1rem; margin: 0 0 8px; }
h3 { font-size: 0.95rem; margin: 12px 0 6px; }
.sub, .muted { color: var(--muted); }
.sub { margin: 2px 0 0; font-size: 0.9rem; }
[role="tablist"] { display: flex; gap: 4px; }
[role="tab"] { border: 1px solid var(--line); background: var(--panel); padding: 6px 14px; border-radius: 6px 6px 0 0; cursor: pointer; font: inherit; }
[role="tab"][aria-selected="true"] { background: var(--bg); border-bottom-color: var(--bg); font-weight: bold; }
main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr) minmax(0, 1.2fr); grid-template-areas: "chart chart chart" "controls context log"; align-items: start; gap: 12px 16px; padding: 12px 16px; }
#chart-section { grid-area: chart; }
#controls { grid-area: controls; }
#context-section { grid-area: context; }
#log-section { grid-area: log; }
@media (max-width: 1100px) { main { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); grid-template-areas: "chart chart" "controls log" "context log"; } }
@media (max-width: 700px) { main { grid-template-columns: minmax(0, 1fr); grid-template-areas: "chart" "controls" "context" "log"; } }
section { min-width: 0; }
main > section:not(#chart-section) { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.section-head { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: baseline; gap: 8px; }
#chart { border: 1px solid var(--line); border-radius: 8px; overflow: auto; max-height: 80vh; background: #fff; }
#chart.fit svg { width: 100%; height: auto; max-height: 70vh; }
#chart:not(.fit) { cursor: grab; }
#chart.panning { cursor: grabbing; user-select: none; }
.chart-options { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 16px; }
.zoom { display: flex; align-items: center; gap: 4px; }
.zoom button { min-width: 2.2em; padding: 2px 8px; }
.hint { font-size: 0.8rem; margin: 0 0 4px; }
.collision { font-size: 0.8rem; }
#live-sessions button.unreadable { border-color: var(--blocked); color: var(--blocked); }
#hook-info h4 { margin: 8px 0 2px; font-size: 0.85rem; }
#chart svg { display: block; }
#chart text { font-family: "DejaVu Sans", Verdana, sans-serif; }
#chart g.node.current [fill="#f6f8fa"] { fill: var(--current-bg); }
#chart g.node.current path[fill="none"] { stroke: var(--current); stroke-width: 3; }
#chart g.node g.enabled > a > polygon[fill] { fill: var(--enabled-bg); }
#chart g.edge.enabled path { stroke: var(--enabled); stroke-width: 2.5; }
#chart g.edge.enabled polygon { stroke: var(--enabled); fill: var(--enabled); }
#chart g.node g.taken > a > polygon[fill] { fill: var(--taken-bg); }
#chart g.node g.taken.enabled > a > polygon[fill] { fill: var(--taken-bg); stroke: var(--enabled); stroke-width: 2; }
#chart g.edge.taken path { stroke: var(--taken); stroke-width: 3.5; }
#chart g.edge.taken polygon { stroke: var(--taken); fill: var(--taken); }
#chart g.edge.enabled text, #chart g.edge.taken text { font-weight: bold; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; list-style: none; padding: 0; margin: 8px 0; font-size: 0.85rem; }
.swatch { display: inline-block; width: 14px; height: 14px; border-radius: 3px; vertical-align: -2px; border: 2px solid; }
.swatch.current { background: var(--current-bg); border-color: var(--current); }
.swatch.enabled { background: var(--enabled-bg); border-color: var(--enabled); }
.swatch.taken { background: var(--taken-bg); border-color: var(--taken); }
ul.compact { margin: 0; padding-left: 18px; font-size: 0.85rem; }
ul.plain { list-style: none; margin: 0; padding: 0; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 10px; padding: 8px 10px; min-width: 0; }
legend { font-weight: bold; padding: 0 4px; }
.row { display: flex; flex-direction: column; gap: 2px; margin: 6px 0; }
.row input, .row select, .row textarea { font: inherit; padding: 4px 6px; max-width: 100%; }
textarea { font-family: "DejaVu Sans Mono", monospace; font-size: 0.85rem; resize: vertical; }
label.inline { display: block; margin: 4px 0; font-size: 0.9rem; }
button { font: inherit; padding: 5px 10px; border: 1px solid #8c959f; border-radius: 6px; background: var(--panel); cursor: pointer; }
button:hover:not(:disabled) { background: #eaeef2; }
button:disabled { opacity: 0.5; cursor: not-allowed; }
button[aria-pressed="true"] { background: var(--current-bg); border-color: var(--current); }
:focus-visible { outline: 3px solid var(--current); outline-offset: 2px; }
.buttons, .examples { display: flex; flex-wrap: wrap; gap: 6px; margin: 6px 0; }
.examples button { font-size: 0.85rem; padding: 3px 8px; }
.error { color: var(--blocked); margin: 4px 0; min-height: 0; }
.error:empty { display: none; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 12px; margin: 0; font-size: 0.85rem; }
dt { color: var(--muted); }
dd { margin: 0; font-family: "DejaVu Sans Mono", monospace; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85rem; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 6px; text-align: left; }
#in-flight-controls li { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; padding: 4px 0; border-bottom: 1px solid var(--line); }
#in-flight-controls .call { flex: 1 1 12em; font-family: "DejaVu Sans Mono", monospace; font-size: 0.85rem; overflow-wrap: anywhere; }
#log { margin: 0; padding-left: 2.2em; max-height: 70vh; overflow: auto; font-size: 0.85rem; }
#log li { padding: 4px 0; border-bottom: 1px solid var(--line); }
#log .label { font-family: "DejaVu Sans Mono", monospace; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 6px; border-radius: 10px; font-size: 0.8rem; font-weight: bold; border: 1px solid; }
.badge.allowed { color: var(--enabled); border-color: var(--enabled); background: var(--enabled-bg); }
.badge.blocked { color: var(--blocked); border-color: var(--blocked); background: var(--blocked-bg); }
.badge.recovered { color: var(--current); border-color: var(--current); background: var(--current-bg); }
.states { color: var(--muted); }
.reason { margin: 2px 0; }
pre { background: var(--panel); padding: 6px; overflow: auto; font-size: 0.8rem; max-height: 240px; white-space: pre-wrap; overflow-wrap: anywhere; }
#timeline { max-height: 40vh; overflow: auto; padding-left: 2.6em; margin: 0; font-size: 0.85rem; }
#timeline button { width: 100%; text-align: left; font-size: 0.85rem; padding: 2px 6px; border-color: transparent; background: none; overflow-wrap: anywhere; }
#timeline li.refused button { color: var(--blocked); font-weight: bold; }
#timeline li.past button { color: var(--muted); }
#timeline li.refused.past button { color: var(--blocked); }
#timeline button[aria-current="step"] { background: var(--current-bg); border-color: var(--current); color: var(--fg); }
#live-sessions button { width: 100%; text-align: left; margin: 3px 0; overflow-wrap: anywhere; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 0.85em; overflow-wrap: anywhere; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;
