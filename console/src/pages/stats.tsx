import { ApiError, get, ownerPath, PROJECT_NOT_FOUND } from '../api';
import { LoadError, useLoad } from '../components';
import { formatCount } from '../logic/format';
import { bucketLabel, type ChartData, chartData, chartSummary, chartTitle, type StatsAnswer } from '../logic/stats';

const CHARTS = [
  { granularity: 'hour', by: 'result' },
  { granularity: 'hour', by: 'executor' },
  { granularity: 'hour', by: 'version' },
  { granularity: 'day', by: 'result' },
  { granularity: 'day', by: 'executor' },
  { granularity: 'day', by: 'version' },
] as const;

/** Series colours, told apart by more than hue: each series also has its column in the data table. */
const COLOURS = ['#2f6fdf', '#d9480f', '#2b8a3e', '#862e9c', '#c92a2a', '#5c7cfa', '#e67700', '#0b7285', '#495057', '#a61e4d'];
const colour = (index: number) => COLOURS[index % COLOURS.length];

export function StatsPage({ projectId }: { projectId: string }) {
  const stats = useLoad(async () => {
    try {
      return await Promise.all(CHARTS.map((chart) => get<StatsAnswer>(ownerPath(projectId, `/stats?granularity=${chart.granularity}&by=${chart.by}`))));
    } catch (error) {
      // Until the stats route is on this server it answers 404 (not the project's 404): the page says so instead of failing.
      if (error instanceof ApiError && error.status === 404 && error.message !== PROJECT_NOT_FOUND) return 'unavailable' as const;
      throw error;
    }
  }, [projectId]);
  return (
    <>
      <h1 tabIndex={-1}>Stats</h1>
      {stats.error !== undefined && <LoadError error={stats.error} />}
      {stats.loading && !stats.data && <p>Loading the stats…</p>}
      {stats.data === 'unavailable' && <p class="notice info">Stats are not available yet on this server.</p>}
      {Array.isArray(stats.data) && stats.data.map((answer) => <Chart key={`${answer.granularity}-${answer.by}`} answer={answer} />)}
    </>
  );
}

const WIDTH = 720;
const HEIGHT = 180;
const AXIS = 28;

/** Stacked bars drawn as SVG (no chart library: a few hundred bytes), with the text alternative and the data table beside them. */
function Chart({ answer }: { answer: StatsAnswer }) {
  const data: ChartData = chartData(answer);
  const title = chartTitle(answer.by, answer.granularity);
  const summary = chartSummary(data, answer.by, answer.granularity);
  const headingId = `chart-${answer.granularity}-${answer.by}`;
  const slot = (WIDTH - AXIS) / Math.max(1, data.rows.length);
  const scale = data.max === 0 ? 0 : (HEIGHT - 20) / data.max;
  return (
    <section aria-labelledby={headingId} class="chart">
      <h2 id={headingId}>{title}</h2>
      <figure>
        <svg viewBox={`0 0 ${WIDTH} ${HEIGHT + 20}`} role="img" aria-label={summary} class="bars">
          <line x1={AXIS} y1={HEIGHT} x2={WIDTH} y2={HEIGHT} stroke="#767676" />
          <text x={AXIS - 4} y={14} text-anchor="end" class="axis">
            {formatCount(data.max)}
          </text>
          <text x={AXIS - 4} y={HEIGHT} text-anchor="end" class="axis">
            0
          </text>
          {data.rows.map((row, rowIndex) => {
            let top = HEIGHT;
            return (
              <g key={row.t}>
                {row.values.map((value, seriesIndex) => {
                  const height = value * scale;
                  top -= height;
                  return value > 0 ? (
                    <rect key={seriesIndex} x={AXIS + rowIndex * slot + 1} y={top} width={Math.max(1, slot - 2)} height={height} fill={colour(seriesIndex)} />
                  ) : null;
                })}
              </g>
            );
          })}
          {data.rows.length > 0 && (
            <>
              <text x={AXIS} y={HEIGHT + 16} class="axis">
                {bucketLabel(data.rows[0]?.t ?? 0, answer.granularity)}
              </text>
              <text x={WIDTH} y={HEIGHT + 16} text-anchor="end" class="axis">
                {bucketLabel(data.rows[data.rows.length - 1]?.t ?? 0, answer.granularity)}
              </text>
            </>
          )}
        </svg>
        <figcaption>{summary}</figcaption>
      </figure>
      {data.series.length > 0 && (
        <ul class="legend" aria-label="Legend">
          {data.series.map((name, index) => (
            <li key={name}>
              <span class="swatch" data-colour={index % COLOURS.length} aria-hidden="true" />
              {name}
            </li>
          ))}
        </ul>
      )}
      <div class="table-wrap">
        <table>
          <caption>Data table: {title}</caption>
          <thead>
            <tr>
              <th scope="col">{answer.granularity === 'hour' ? 'Hour (UTC)' : 'Day (UTC)'}</th>
              <th scope="col">Total</th>
              {data.series.map((name) => (
                <th scope="col" key={name}>
                  {name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {data.rows.map((row) => (
              <tr key={row.t}>
                <th scope="row">{bucketLabel(row.t, answer.granularity)}</th>
                <td>{formatCount(row.total)}</td>
                {row.values.map((value, index) => (
                  <td key={data.series[index]}>{formatCount(value)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
