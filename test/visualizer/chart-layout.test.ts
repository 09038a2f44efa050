/**
 * Chart layout in a worker thread (src/visualizer/chart-layout.ts): Graphviz's
 * answer, its errors, and the bound on layouts waiting.
 */
import { describe, expect, it } from 'vitest';
import { ChartLayoutError, ChartRenderer } from '../../src/visualizer/chart-layout.js';

describe('ChartRenderer', () => {
  it('lays out DOT as SVG', async () => {
    const renderer = new ChartRenderer();
    try {
      expect(await renderer.render('digraph { a -> b }')).toMatch(/^<\?xml[\s\S]*<svg/);
    } finally {
      await renderer.close();
    }
  });

  it("reports Graphviz's error for DOT it cannot read", async () => {
    const renderer = new ChartRenderer();
    try {
      await expect(renderer.render('digraph {')).rejects.toThrow(/^Graphviz could not render the chart: syntax error/);
    } finally {
      await renderer.close();
    }
  });

  it('refuses a layout as busy when the waiting ones reach the bound', async () => {
    const renderer = new ChartRenderer({ maxQueued: 1 });
    const running = renderer.render('digraph { a -> b }').catch((error: unknown) => error);
    const waiting = renderer.render('digraph { c -> d }').catch((error: unknown) => error);
    const refused = await renderer.render('digraph { e -> f }').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ChartLayoutError);
    expect((refused as ChartLayoutError).reason).toBe('busy');
    await renderer.close();
    await Promise.all([running, waiting]);
  });

  it('rejects what is waiting when it is closed', async () => {
    const renderer = new ChartRenderer();
    const pending = renderer.render('digraph { a -> b }').catch((error: unknown) => error);
    await renderer.close();
    expect(await pending).toMatchObject({ reason: 'closed' });
  });
});
