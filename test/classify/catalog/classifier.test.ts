/**
 * Tool-call classification: the Pulse catalog row by row, the generic
 * fallback, the tau-bench airline catalog, custom catalogs and their
 * validation, and MCP annotations.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds"; DESIGN.md §2, §3.6, §4.
 * The expected kinds below are written out from DESIGN.md §2's table, not
 * read from the shipped catalog.
 */
import { describe, expect, it } from 'vitest';
import {
  compileCatalog,
  builtinCatalogs,
  classifyToolCall,
  kindFromMcpAnnotations,
  parseCatalog,
} from '../../../src/classify/catalog/index.js';
import { CatalogError } from '../../../src/errors/index.js';
import type { ToolKind } from '../../../machines/safety.types.js';

describe('the Pulse catalog: static tools (DESIGN §2)', () => {
  const staticRows: [string, ToolKind][] = [
    ['pulse_query', 'resolve'],
    ['pulse_metrics', 'read'],
    ['pulse_storage', 'read'],
    ['pulse_pmg', 'read'],
    ['pulse_summarize', 'read'],
    ['pulse_read', 'read'],
    ['pulse_control', 'write'],
    ['pulse_file_edit', 'write'],
    ['patrol_get_findings', 'read'],
    ['patrol_propose_action', 'read'],
    ['patrol_action_capabilities', 'read'],
    ['patrol_assess_finding', 'write'],
    ['patrol_report_finding', 'write'],
    ['patrol_resolve_finding', 'write'],
    ['patrol_propose_observer', 'write'],
    ['pulse_question', 'user_input'],
    ['fetch_url', 'read'],
    ['pulse_run_command', 'write'],
    ['pulse_control_guest', 'write'],
    ['pulse_control_docker', 'write'],
    ['run_command', 'write'],
    ['set_resource_url', 'write'],
    ['pulse_search_resources', 'resolve'],
    ['pulse_get_resource', 'resolve'],
    ['pulse_get_topology', 'resolve'],
    ['pulse_list_infrastructure', 'resolve'],
    ['pulse_get_connection_health', 'resolve'],
    ['pulse_get_docker_logs', 'read'],
    ['pulse_get_performance_metrics', 'read'],
    ['pulse_get_temperatures', 'read'],
    ['pulse_get_baselines', 'read'],
    ['pulse_get_patterns', 'read'],
  ];

  it.each(staticRows)('%s is %s', (tool, kind) => {
    expect(classifyToolCall(tool)).toBe(kind);
  });

  it.each(staticRows)('%s is %s whatever its action argument says', (tool, kind) => {
    expect(classifyToolCall(tool, { action: 'delete', operation: 'get' })).toBe(kind);
  });

  it('pulse_file_edit is a write even with action=read', () => {
    expect(classifyToolCall('pulse_file_edit', { action: 'read' })).toBe('write');
  });

  it('pulse_control is a write even with action=status', () => {
    expect(classifyToolCall('pulse_control', { action: 'status' })).toBe('write');
  });

  it('pulse_read is a read even with action=delete', () => {
    expect(classifyToolCall('pulse_read', { action: 'delete' })).toBe('read');
  });
});

describe('the Pulse catalog: tools keyed on an argument (DESIGN §2)', () => {
  const keyedRows: [string, string, string, ToolKind][] = [
    ['pulse_discovery', 'action', 'get', 'resolve'],
    ['pulse_discovery', 'action', 'list', 'resolve'],
    ['pulse_discovery', 'action', 'run', 'resolve'],
    ['pulse_alerts', 'action', 'list', 'read'],
    ['pulse_alerts', 'action', 'findings', 'read'],
    ['pulse_alerts', 'action', 'resolved', 'read'],
    ['pulse_kubernetes', 'type', 'clusters', 'read'],
    ['pulse_kubernetes', 'type', 'nodes', 'read'],
    ['pulse_kubernetes', 'type', 'pods', 'read'],
    ['pulse_kubernetes', 'type', 'deployments', 'read'],
    ['pulse_kubernetes', 'type', 'logs', 'read'],
    ['pulse_docker', 'action', 'updates', 'read'],
    ['pulse_docker', 'action', 'services', 'read'],
    ['pulse_docker', 'action', 'tasks', 'read'],
    ['pulse_docker', 'action', 'swarm', 'read'],
    ['pulse_docker', 'action', 'check_updates', 'read'],
    ['pulse_knowledge', 'action', 'recall', 'read'],
    ['pulse_knowledge', 'action', 'incidents', 'read'],
    ['pulse_knowledge', 'action', 'correlate', 'read'],
  ];

  it.each(keyedRows)('%s with %s=%s is %s', (tool, argument, value, kind) => {
    expect(classifyToolCall(tool, { [argument]: value })).toBe(kind);
  });

  const keyedTools: [string, string, string][] = [
    ['pulse_discovery', 'action', 'get'],
    ['pulse_alerts', 'action', 'list'],
    ['pulse_kubernetes', 'type', 'pods'],
    ['pulse_docker', 'action', 'services'],
    ['pulse_knowledge', 'action', 'recall'],
  ];

  it.each(keyedTools)('%s without its %s argument fails closed to write', (tool) => {
    expect(classifyToolCall(tool, {})).toBe('write');
  });

  it.each(keyedTools)('%s without any arguments fails closed to write', (tool) => {
    expect(classifyToolCall(tool)).toBe('write');
  });

  it.each(keyedTools)('%s with a non-string %s fails closed to write', (tool, argument, value) => {
    expect(classifyToolCall(tool, { [argument]: [value] })).toBe('write');
    expect(classifyToolCall(tool, { [argument]: 1 })).toBe('write');
    expect(classifyToolCall(tool, { [argument]: null })).toBe('write');
    expect(classifyToolCall(tool, { [argument]: { value } })).toBe('write');
  });

  const unlisted: [string, string, string][] = [
    ['pulse_discovery', 'action', 'delete'],
    ['pulse_discovery', 'action', 'refresh'],
    ['pulse_alerts', 'action', 'acknowledge'],
    ['pulse_alerts', 'action', 'resolve'],
    ['pulse_kubernetes', 'type', 'scale'],
    ['pulse_docker', 'action', 'restart'],
    ['pulse_docker', 'action', 'update'],
    ['pulse_knowledge', 'action', 'remember'],
  ];

  it.each(unlisted)('%s with an unlisted %s=%s fails closed to write', (tool, argument, value) => {
    expect(classifyToolCall(tool, { [argument]: value })).toBe('write');
  });

  it('pulse_kubernetes is keyed on type, not action', () => {
    expect(classifyToolCall('pulse_kubernetes', { action: 'pods' })).toBe('write');
  });

  it('pulse_kubernetes with an unlisted type is a write even when action names a read', () => {
    expect(classifyToolCall('pulse_kubernetes', { type: 'exec', action: 'logs' })).toBe('write');
  });

  it('a keyed tool does not fall back to read words in its argument', () => {
    expect(classifyToolCall('pulse_alerts', { action: 'get' })).toBe('write');
  });

  it('an empty argument value fails closed to write', () => {
    expect(classifyToolCall('pulse_alerts', { action: '' })).toBe('write');
  });
});

describe('names and values', () => {
  it('tool names are trimmed', () => {
    expect(classifyToolCall('  pulse_query\t')).toBe('resolve');
  });

  it('tool names are case-sensitive: a differently cased name is an unknown tool', () => {
    expect(classifyToolCall('Pulse_Query')).toBe('write');
  });

  it('a differently cased name of a listed tool impersonates it: write, whatever its arguments', () => {
    expect(classifyToolCall('PULSE_METRICS', { action: 'get' })).toBe('write');
    expect(classifyToolCall('PULSE_CONTROL', { action: 'status' })).toBe('write');
  });

  it('a look-alike of a listed tool (Cyrillic o, full-width letters) is a write, whatever its arguments', () => {
    expect(classifyToolCall('pulse_contr\u043el', { action: 'status' })).toBe('write');
    expect(classifyToolCall('\uff50ulse_control', { action: 'list' })).toBe('write');
  });

  it('an unknown tool whose name is not plain ASCII is a write', () => {
    expect(classifyToolCall('v\u00e9rifier', { action: 'get' })).toBe('write');
  });

  it('a look-alike argument value that could hide a write word is a write', () => {
    expect(classifyToolCall('vm_tool', { action: 'list', operation: '\uff52estart' })).toBe('write');
    expect(classifyToolCall('vm_tool', { action: 'g\u0435t' })).toBe('write');
  });

  it('an argument value with spaces is judged by its words', () => {
    expect(classifyToolCall('vm_tool', { action: 'show all' })).toBe('read');
  });

  it('argument values are trimmed', () => {
    expect(classifyToolCall('pulse_alerts', { action: '  list \n' })).toBe('read');
  });

  it('argument values are case-insensitive', () => {
    expect(classifyToolCall('pulse_kubernetes', { type: 'PODS' })).toBe('read');
  });

  it('argument names are not trimmed or case-folded', () => {
    expect(classifyToolCall('pulse_alerts', { Action: 'list' })).toBe('write');
    expect(classifyToolCall('pulse_alerts', { ' action': 'list' })).toBe('write');
  });

  it('a name that is not a string is an unknown tool: write', () => {
    expect(classifyToolCall(42 as unknown as string, { action: 'get' })).toBe('write');
    expect(classifyToolCall(null as unknown as string)).toBe('write');
  });
});

describe('arguments given as a JSON string', () => {
  it('are parsed for a keyed tool', () => {
    expect(classifyToolCall('pulse_alerts', '{"action":"list"}')).toBe('read');
  });

  it('are parsed for the fallback', () => {
    expect(classifyToolCall('some_tool', '{"operation":"status"}')).toBe('read');
  });

  it('that are not valid JSON fail closed to write', () => {
    expect(classifyToolCall('pulse_alerts', '{"action":"list"')).toBe('write');
  });

  it('that parse to an array fail closed to write', () => {
    expect(classifyToolCall('pulse_alerts', '["list"]')).toBe('write');
  });
});

describe('the generic fallback for unknown tools (DESIGN §2)', () => {
  const writeWords = [
    'start',
    'stop',
    'restart',
    'delete',
    'shutdown',
    'reboot',
    'write',
    'append',
    'update',
    'trigger',
    'resolve',
    'dismiss',
    'control',
  ];
  const readWords = ['get', 'list', 'search', 'query', 'read', 'logs', 'status', 'health', 'describe', 'inspect', 'show'];

  it.each(writeWords)('action=%s is a write', (word) => {
    expect(classifyToolCall('vm_tool', { action: word })).toBe('write');
  });

  it.each(readWords)('action=%s is a read', (word) => {
    expect(classifyToolCall('vm_tool', { action: word })).toBe('read');
  });

  it.each(readWords)('operation=%s is a read', (word) => {
    expect(classifyToolCall('vm_tool', { operation: word })).toBe('read');
  });

  it('operation=reboot is a write', () => {
    expect(classifyToolCall('vm_tool', { operation: 'reboot' })).toBe('write');
  });

  it('write words win over read words in the same value', () => {
    expect(classifyToolCall('vm_tool', { action: 'get_then_delete' })).toBe('write');
  });

  it('write words win over read words across arguments', () => {
    expect(classifyToolCall('vm_tool', { action: 'get', operation: 'restart' })).toBe('write');
  });

  it('neither a write word nor a read word is a write', () => {
    expect(classifyToolCall('vm_tool', { action: 'frobnicate' })).toBe('write');
  });

  it('no arguments at all is a write', () => {
    expect(classifyToolCall('vm_tool')).toBe('write');
  });

  it('values are matched by whole words: get_logs is a read', () => {
    expect(classifyToolCall('vm_tool', { action: 'get_logs' })).toBe('read');
  });

  it('values are matched by whole words: restart_service is a write', () => {
    expect(classifyToolCall('vm_tool', { action: 'restart_service' })).toBe('write');
  });

  it('values are matched by whole words: forget contains get but is a write', () => {
    expect(classifyToolCall('vm_tool', { action: 'forget' })).toBe('write');
  });

  it('values are matched by whole words: getaway is a write', () => {
    expect(classifyToolCall('vm_tool', { action: 'getaway' })).toBe('write');
  });

  it('words are split on any non-letter, non-digit character', () => {
    expect(classifyToolCall('vm_tool', { action: 'logs/show-all.v2' })).toBe('read');
  });

  it('fallback values are case-insensitive and trimmed', () => {
    expect(classifyToolCall('vm_tool', { action: '  GET  ' })).toBe('read');
  });

  it('only action and operation are looked at', () => {
    expect(classifyToolCall('vm_tool', { mode: 'get', command: 'list' })).toBe('write');
  });

  it('a non-string action is ignored', () => {
    expect(classifyToolCall('vm_tool', { action: ['get'] })).toBe('write');
  });

  it('a non-string action does not hide a string operation', () => {
    expect(classifyToolCall('vm_tool', { action: 7, operation: 'get' })).toBe('read');
  });

  it.each([
    ['null', null],
    ['an array', ['get']],
    ['a number', 42],
    ['a boolean', true],
    ['a plain string', 'get'],
  ])('args that are %s fail closed to write', (_, args) => {
    expect(classifyToolCall('vm_tool', args)).toBe('write');
  });

  it('an action inherited through __proto__ is not read', () => {
    expect(classifyToolCall('vm_tool', JSON.parse('{"__proto__":{"action":"get"}}'))).toBe('write');
  });

  it('an action inherited from a prototype object is not read', () => {
    expect(classifyToolCall('vm_tool', Object.create({ action: 'get' }))).toBe('write');
  });

  it('a keyed argument inherited through __proto__ is not read', () => {
    expect(classifyToolCall('pulse_alerts', JSON.parse('{"__proto__":{"action":"list"}}'))).toBe('write');
  });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    'a tool named %s is not looked up on a prototype: write',
    (name) => {
      expect(classifyToolCall(name)).toBe('write');
    },
  );

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    'a keyed value %j is not looked up on a prototype: write',
    (value) => {
      expect(classifyToolCall('pulse_alerts', { action: value })).toBe('write');
    },
  );

  it.each(['constructor', '__proto__', 'toString'])('a fallback value %j is not a read word', (value) => {
    expect(classifyToolCall('vm_tool', { action: value })).toBe('write');
  });

  it('an args object whose getter throws is a write, and nothing is thrown', () => {
    const args = {
      get action(): string {
        throw new Error('boom');
      },
    };
    expect(() => classifyToolCall('vm_tool', args)).not.toThrow();
    expect(classifyToolCall('vm_tool', args)).toBe('write');
  });

  it('an args proxy whose traps throw is a write, and nothing is thrown', () => {
    const args = new Proxy(
      {},
      {
        getOwnPropertyDescriptor() {
          throw new Error('boom');
        },
        get() {
          throw new Error('boom');
        },
      },
    );
    expect(classifyToolCall('pulse_alerts', args)).toBe('write');
    expect(classifyToolCall('vm_tool', args)).toBe('write');
  });
});

describe('the tau-airline catalog (DESIGN §4)', () => {
  const classify = compileCatalog(builtinCatalogs['tau-airline']).kindOf;
  const rows: [string, ToolKind][] = [
    ['get_user_details', 'resolve'],
    ['get_reservation_details', 'resolve'],
    ['list_all_airports', 'read'],
    ['search_direct_flight', 'read'],
    ['search_onestop_flight', 'read'],
    ['get_flight_status', 'read'],
    ['book_reservation', 'write'],
    ['cancel_reservation', 'write'],
    ['send_certificate', 'write'],
    ['update_reservation_baggages', 'write'],
    ['update_reservation_flights', 'write'],
    ['update_reservation_passengers', 'write'],
    ['transfer_to_human_agents', 'write'],
    ['calculate', 'neutral'],
    ['think', 'neutral'],
  ];

  it.each(rows)('%s is %s', (tool, kind) => {
    expect(classify(tool, {})).toBe(kind);
  });

  it('an unknown tool is a write, even with a read-like action (no fallback)', () => {
    expect(classify('get_weather', { action: 'get' })).toBe('write');
  });

  it('is named tau-airline', () => {
    expect(builtinCatalogs['tau-airline'].name).toBe('tau-airline');
  });

  it('the pulse catalog does not know the airline tools', () => {
    expect(classifyToolCall('cancel_reservation')).toBe('write');
    expect(classifyToolCall('think')).toBe('write');
  });
});

describe('a custom catalog, kind by kind (compileCatalog(...).kindOf)', () => {
  const catalog = {
    name: 'mine',
    tools: {
      ' lookup ': 'resolve',
      calc: 'neutral',
      vm: { argument: 'op', cases: { Status: 'read', ' LIST ': 'resolve', ask: 'user_input' } },
    },
    fallback: { arguments: ['verb'], writeWords: ['Nuke'], readWords: ['peek'] },
  };
  const classify = compileCatalog(catalog).kindOf;

  it('classifies a static tool', () => {
    expect(classify('calc')).toBe('neutral');
  });

  it('trims tool names given in the catalog', () => {
    expect(classify('lookup')).toBe('resolve');
  });

  it('classifies a keyed tool by its argument', () => {
    expect(classify('vm', { op: 'ask' })).toBe('user_input');
  });

  it('trims and case-folds case values given in the catalog', () => {
    expect(classify('vm', { op: 'status' })).toBe('read');
    expect(classify('vm', { op: 'list' })).toBe('resolve');
  });

  it('a keyed tool with an unlisted value is a write', () => {
    expect(classify('vm', { op: 'reboot' })).toBe('write');
  });

  it('uses its own fallback arguments and words', () => {
    expect(classify('other', { verb: 'peek' })).toBe('read');
    expect(classify('other', { verb: 'peek_and_nuke' })).toBe('write');
  });

  it('does not use the Pulse fallback arguments', () => {
    expect(classify('other', { action: 'get' })).toBe('write');
  });

  it('without a fallback, every unknown tool is a write', () => {
    const bare = compileCatalog({ name: 'bare', tools: { a: 'read' } }).kindOf;
    expect(bare('b', { action: 'get' })).toBe('write');
  });

  it('does not share rules with the Pulse catalog', () => {
    expect(classify('pulse_query')).toBe('write');
  });

  it('accepts a catalog read from JSON text', () => {
    const fromJson = compileCatalog(JSON.parse('{"name":"j","tools":{"x":{"argument":"a","cases":{"y":"read"}}}}')).kindOf;
    expect(fromJson('x', { a: 'Y' })).toBe('read');
  });

  it('a catalog key __proto__ cannot make tools reads through the prototype', () => {
    const tricky = compileCatalog(
      JSON.parse(
        '{"name":"t","tools":{"__proto__":{"argument":"a","cases":{"x":"read"}},"k":{"argument":"a","cases":{"__proto__":"read"}}}}',
      ),
    ).kindOf;
    expect(tricky('__proto__', { a: 'x' })).toBe('write');
    expect(tricky('k', { a: '__proto__' })).toBe('write');
    expect(tricky('anything', { a: 'x' })).toBe('write');
  });

  it('the shipped pulse catalog builds the same classifier as classifyToolCall', () => {
    const pulse = compileCatalog(builtinCatalogs.pulse).kindOf;
    for (const [tool, args] of [
      ['pulse_docker', { action: 'swarm' }],
      ['pulse_kubernetes', { type: 'exec' }],
      ['vm_tool', { action: 'get' }],
    ] as const) {
      expect(pulse(tool, args)).toBe(classifyToolCall(tool, args));
    }
  });
});

describe('catalog validation (CatalogError names the bad entry)', () => {
  function catalogError(input: unknown, source?: string): CatalogError {
    try {
      parseCatalog(input, source);
    } catch (error) {
      if (error instanceof CatalogError) return error;
      throw error;
    }
    throw new Error('expected a CatalogError');
  }

  it('compileCatalog throws a CatalogError for a bad catalog', () => {
    expect(() => compileCatalog({ name: 'x', tools: { t: 'maybe' } }).kindOf).toThrow(CatalogError);
  });

  it('the error is named CatalogError', () => {
    expect(catalogError({ tools: {} }).name).toBe('CatalogError');
  });

  it('a tool listed twice once names are trimmed is reported', () => {
    const error = catalogError({ name: 'x', tools: { ' pulse_query': 'read', pulse_query: 'write' } });
    expect(error.message).toBe("catalog 'x': tools.pulse_query: the tool is listed twice (names are trimmed)");
  });

  it('a missing name is reported at path name', () => {
    const error = catalogError({ tools: {} });
    expect(error.path).toEqual(['name']);
    expect(error.message).toMatch(/^catalog \(unnamed\): name: /);
  });

  it('a blank name is reported at path name', () => {
    expect(catalogError({ name: '   ', tools: {} }).path).toEqual(['name']);
  });

  it('missing tools are reported at path tools', () => {
    expect(catalogError({ name: 'm' }).path).toEqual(['tools']);
  });

  it('an unknown static kind names the tool', () => {
    const error = catalogError({ name: 'm', tools: { good: 'read', my_tool: 'delete' } });
    expect(error.path).toEqual(['tools', 'my_tool']);
    expect(error.message).toMatch(/^catalog 'm': tools\.my_tool: /);
  });

  it('a tool rule of the wrong type names the tool', () => {
    expect(catalogError({ name: 'm', tools: { my_tool: 5 } }).path).toEqual(['tools', 'my_tool']);
  });

  it('an unknown kind in a keyed tool names the case', () => {
    const error = catalogError({ name: 'm', tools: { my_tool: { argument: 'a', cases: { get: 'nope' } } } });
    expect(error.path).toEqual(['tools', 'my_tool', 'cases', 'get']);
    expect(error.message).toMatch(/^catalog 'm': tools\.my_tool\.cases\.get: /);
  });

  it('a keyed tool without an argument names the argument', () => {
    const error = catalogError({ name: 'm', tools: { my_tool: { cases: { get: 'read' } } } });
    expect(error.path).toEqual(['tools', 'my_tool', 'argument']);
  });

  it('a value listed twice (after trimming and case-folding) names the value', () => {
    const error = catalogError({ name: 'm', tools: { my_tool: { argument: 'a', cases: { get: 'read', ' GET': 'write' } } } });
    expect(error.path).toEqual(['tools', 'my_tool', 'cases', ' GET']);
    expect(error.message).toContain('listed twice');
  });

  it('an unknown top-level key is reported and named', () => {
    const error = catalogError({ name: 'm', tools: {}, extra: 1 });
    expect(error.message).toContain('extra');
  });

  it('an unknown key in a keyed tool is reported and named', () => {
    const error = catalogError({ name: 'm', tools: { my_tool: { argument: 'a', cases: {}, default: 'read' } } });
    expect(error.message).toContain('default');
    expect(error.path.slice(0, 2)).toEqual(['tools', 'my_tool']);
  });

  it('a fallback without arguments names fallback.arguments', () => {
    const error = catalogError({ name: 'm', tools: {}, fallback: { arguments: [], writeWords: [], readWords: [] } });
    expect(error.path).toEqual(['fallback', 'arguments']);
  });

  it('a blank fallback word names its index', () => {
    const error = catalogError({ name: 'm', tools: {}, fallback: { arguments: ['a'], writeWords: ['x', ' '], readWords: [] } });
    expect(error.path).toEqual(['fallback', 'writeWords', 1]);
  });

  it.each([
    ['null', null],
    ['a number', 42],
    ['a string', 'pulse'],
    ['an array', []],
  ])('a catalog that is %s is reported at its root', (_, input) => {
    const error = catalogError(input);
    expect(error.path).toEqual([]);
    expect(error.message).toContain('(root)');
  });

  it('names the source when one is given', () => {
    expect(catalogError({ tools: {} }, 'catalogs/mine.json').message).toMatch(/^catalog catalogs\/mine\.json: /);
  });

  it.each(Object.entries(builtinCatalogs))('the shipped %s catalog validates', (_, catalog) => {
    expect(() => parseCatalog(catalog)).not.toThrow();
  });
});

describe('kindFromMcpAnnotations (DESIGN §4)', () => {
  it('a trusted server with readOnlyHint true is a read', () => {
    expect(kindFromMcpAnnotations({ readOnlyHint: true }, { trusted: true })).toBe('read');
  });

  it('an untrusted server with readOnlyHint true is a write', () => {
    expect(kindFromMcpAnnotations({ readOnlyHint: true }, { trusted: false })).toBe('write');
  });

  it('a trusted server with readOnlyHint false is a write', () => {
    expect(kindFromMcpAnnotations({ readOnlyHint: false }, { trusted: true })).toBe('write');
  });

  it('a trusted server without readOnlyHint is a write (its default is false)', () => {
    expect(kindFromMcpAnnotations({}, { trusted: true })).toBe('write');
  });

  it('a trusted server with readOnlyHint missing but destructiveHint false is a write', () => {
    expect(kindFromMcpAnnotations({ destructiveHint: false, idempotentHint: true }, { trusted: true })).toBe('write');
  });

  it('readOnlyHint must be the boolean true', () => {
    expect(kindFromMcpAnnotations({ readOnlyHint: 'true' }, { trusted: true })).toBe('write');
    expect(kindFromMcpAnnotations({ readOnlyHint: 1 }, { trusted: true })).toBe('write');
  });

  it('trusted must be the boolean true', () => {
    expect(kindFromMcpAnnotations({ readOnlyHint: true }, { trusted: 'yes' } as unknown as { trusted: boolean })).toBe('write');
  });

  it('missing options are untrusted', () => {
    expect(kindFromMcpAnnotations({ readOnlyHint: true }, undefined as unknown as { trusted: boolean })).toBe('write');
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'readOnlyHint'],
    ['a number', 1],
    ['an array', [true]],
  ])('annotations that are %s are a write', (_, annotations) => {
    expect(kindFromMcpAnnotations(annotations, { trusted: true })).toBe('write');
  });

  it('a readOnlyHint inherited through __proto__ is not trusted', () => {
    expect(kindFromMcpAnnotations(JSON.parse('{"__proto__":{"readOnlyHint":true}}'), { trusted: true })).toBe('write');
  });
});

describe('classifier edge cases', () => {
  it('a keyed tool with null arguments is a write, and the classifier does not throw', () => {
    expect(classifyToolCall('pulse_discovery', null)).toBe('write');
  });

  it('an unknown tool in a catalog without a fallback is a write', () => {
    const classify = compileCatalog({ name: 'bare', tools: { a: 'read' } }).kindOf;
    expect(classify('pulse_newtool', { action: 'list' })).toBe('write');
  });

  it('the fallback admits an unknown tool as a read by a read word of its action', () => {
    expect(classifyToolCall('pulse_newtool', { action: 'list' })).toBe('read');
  });

  it('a bad case of a keyed tool is named by its full path', () => {
    let error: unknown;
    try {
      parseCatalog({ name: 'x', tools: { t: { argument: 'a', cases: { get: 'maybe' } } } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CatalogError);
    expect((error as CatalogError).path).toEqual(['tools', 't', 'cases', 'get']);
  });

  it.each([null, 42, 'catalog'])('a catalog that is not an object (%j) is a CatalogError, not a crash', (input) => {
    expect(() => parseCatalog(input)).toThrow(CatalogError);
  });

  it('a tool listed twice once names are trimmed is named by its path', () => {
    let error: unknown;
    try {
      parseCatalog({ name: 'x', tools: { a: 'read', ' a ': 'write' } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CatalogError);
    expect((error as CatalogError).path).toEqual(['tools', ' a ']);
  });
});
