/**
 * This month's use: per workspace against its plan's quota, per project against its cap, per key,
 * and a daily chart drawn on the server as SVG (no script, no external chart library). Monthly
 * totals are the metering's durable counts; per-key and per-day counts are the usage_day rows the
 * usage flush writes.
 */
import { effectivePlan, usageMonth, type DailyUsage, type Plan, type Workspace } from '../accounts/index.js';
import type { ConsoleDeps } from './deps.js';
import { formatCount } from './layout.js';

export interface WorkspaceUsage {
  month: string;
  plan: Plan;
  used: number;
  /** Project id -> counted requests this month. */
  byProject: Map<string, number>;
  /** Key id -> counted requests this month. */
  byKey: Map<string, number>;
  daily: DailyUsage[];
}

export function daysIn(month: string): number {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

export async function workspaceUsage(
  deps: ConsoleDeps,
  workspace: Workspace,
  now = new Date(),
): Promise<WorkspaceUsage> {
  const month = usageMonth(now);
  const [plan, rows, daily] = await Promise.all([
    deps.planLimits(effectivePlan(workspace, now)),
    deps.store.listUsage(month, { workspaceId: workspace.id }),
    deps.store.listDailyUsage(
      workspace.id,
      `${month}-01`,
      `${month}-${String(daysIn(month)).padStart(2, '0')}`,
    ),
  ]);
  const byProject = new Map<string, number>();
  let used = 0;
  for (const row of rows) {
    if (row.scope === 'workspace') used = Number(row.used);
    else byProject.set(row.id, Number(row.used));
  }
  const byKey = new Map<string, number>();
  for (const d of daily) byKey.set(d.keyId, (byKey.get(d.keyId) ?? 0) + d.count);
  return { month, plan, used, byProject, byKey, daily };
}

/** From this share of a cap or quota on, the meter warns (colour and words). */
export const METER_WARN_AT = 0.9;

export function Meter({ used, limit, label }: { used: number; limit: number | null; label: string }) {
  if (limit === null) {
    return (
      <p>
        {label}: <strong>{formatCount(used)}</strong> requests, no cap
      </p>
    );
  }
  const share = limit === 0 ? 1 : Math.min(1, used / limit);
  const level = share >= 1 ? 'full' : share >= METER_WARN_AT ? 'near' : '';
  return (
    <div class={level ? `meter-row ${level}` : 'meter-row'}>
      <p>
        {label}: <strong>{formatCount(used)}</strong> of {formatCount(limit)} requests (
        {Math.round(share * 100)}%)
        {level === 'full' && (
          <strong class="warn-text"> Used up: further requests are refused until next month.</strong>
        )}
        {level === 'near' && (
          <strong class="warn-text">
            {' '}
            Nearly used up: {formatCount(limit - used)} requests left this month.
          </strong>
        )}
      </p>
      <svg class="meter" viewBox="0 0 100 4" preserveAspectRatio="none" aria-hidden="true">
        <rect
          class={level ? 'meter-bar warn' : 'meter-bar'}
          x={0}
          y={0}
          width={Number((share * 100).toFixed(1))}
          height={4}
        />
      </svg>
    </div>
  );
}

const W = 640;
const H = 180;
const PAD_LEFT = 44;
const PAD_BOTTOM = 22;

/** Bars of counted requests per day of the month, with a table of the same numbers for screen readers. */
export function DailyChart({
  month,
  daily,
  title,
}: {
  month: string;
  daily: readonly DailyUsage[];
  title: string;
}) {
  const days = daysIn(month);
  const counts = new Array<number>(days).fill(0);
  for (const d of daily) {
    const day = Number(d.day.slice(8, 10));
    if (d.day.startsWith(month) && day >= 1 && day <= days) counts[day - 1]! += d.count;
  }
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) {
    return (
      <p class="empty chart-empty">
        {title}: no requests counted yet in {month}. The chart of requests per day appears with the first one.
      </p>
    );
  }
  const max = Math.max(...counts);
  const plotW = W - PAD_LEFT - 8;
  const plotH = H - PAD_BOTTOM - 10;
  const slot = plotW / days;
  return (
    <figure>
      <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="chart-title">
        <title id="chart-title">{`${title}: ${formatCount(total)} requests in ${month}, at most ${formatCount(max)} on one day`}</title>
        <line class="axis" x1={PAD_LEFT} y1={10 + plotH} x2={W - 8} y2={10 + plotH} />
        <line class="axis" x1={PAD_LEFT} y1={10} x2={PAD_LEFT} y2={10 + plotH} />
        <text x={PAD_LEFT - 6} y={14} text-anchor="end">
          {formatCount(max)}
        </text>
        <text x={PAD_LEFT - 6} y={10 + plotH} text-anchor="end">
          0
        </text>
        {counts.map((count, i) => {
          const h = (count / max) * plotH;
          return (
            <rect
              class="bar"
              x={PAD_LEFT + i * slot + 1}
              y={10 + plotH - h}
              width={Math.max(1, slot - 2)}
              height={h}
            >
              <title>{`${month}-${String(i + 1).padStart(2, '0')}: ${formatCount(count)}`}</title>
            </rect>
          );
        })}
        {counts.map((_, i) =>
          i === 0 || (i + 1) % 5 === 0 ? (
            <text x={PAD_LEFT + i * slot + slot / 2} y={H - 6} text-anchor="middle">
              {String(i + 1)}
            </text>
          ) : null,
        )}
      </svg>
      <figcaption class="muted">
        {title}, requests per day in {month} (UTC).
      </figcaption>
      <details>
        <summary>The numbers</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col" class="num">
                  Requests
                </th>
              </tr>
            </thead>
            <tbody>
              {counts.map((count, i) =>
                count > 0 ? (
                  <tr>
                    <td>{`${month}-${String(i + 1).padStart(2, '0')}`}</td>
                    <td class="num">{formatCount(count)}</td>
                  </tr>
                ) : null,
              )}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
