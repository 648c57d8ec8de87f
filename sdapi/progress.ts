/** Where a progress bar draws: stderr, and only when it is a terminal (a pipe or a log gets no bar). */
export interface ProgressTarget {
  write(text: string): void;
  /**
   * Replace the terminal's current line with `text` (empty: erase it). The CLI's own outputs make the escape
   * sequence themselves, because their `write` turns every control character into a visible escape.
   */
  redraw?(text: string): void;
  isTTY?: boolean;
  columns?: number;
}

export interface Progress {
  update(done: number, total: number): void;
  /** Erase the bar so the next line starts clean. */
  done(): void;
}

const SILENT: Progress = { update: () => {}, done: () => {} };

/** A one-line bar redrawn in place: `keys [#########.........] 450/1000`. */
export function progressBar(target: ProgressTarget, label: string, unit: (n: number) => string = String): Progress {
  if (!target.isTTY) return SILENT;
  const redraw = (text: string) => (target.redraw ? target.redraw(text) : target.write(`\r\x1b[K${text}`));
  let drawn = false;
  return {
    update(done, total) {
      const counts = `${unit(done)}/${unit(total)}`;
      const width = Math.max(10, Math.min(40, (target.columns ?? 80) - label.length - counts.length - 6));
      const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : width;
      redraw(`${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${counts}`);
      drawn = true;
    },
    done() {
      if (drawn) redraw('');
      drawn = false;
    },
  };
}
