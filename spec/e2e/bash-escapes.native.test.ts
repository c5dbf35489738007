/**
 * The real pinned Claude Code's Bash tool starting the background jobs models write: `cmd &`, `nohup cmd &`,
 * `setsid cmd &`, a new process group (`setpgid(0,0)`), a parent shell that exits at once, and a job that clears
 * its environment, under the cgroup backend (the server's default wherever a cgroup can be had, as here). The pinned CLI
 * refuses the `&` operator without an approval, so the run asks the host (`ask_host`) and the test allows.
 * Every job is seen running during the run; after it, none is alive and the run reports cleanup confirmed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { inCwd, marker, startAdapterTier, type AdapterTier } from './adapter-tier.ts';
import { promptTag, type Scenario } from '../../fixtures/fake-anthropic/server.ts';
import { questionsOf } from '../helpers/typed-results.ts';

// Job names unique to this process: another suite on the machine may run the same jobs at the same time.
const RUN_TAG = randomBytes(4).toString('hex');
const JOBS = [3011, 3012, 3013, 3014, 3015, 3016].map((n) => `esc${n}-${RUN_TAG}`);
const [J1, J2, J3, J4, J5, J6] = JOBS as [string, string, string, string, string, string];
// The last job clears its environment (no run marker) in a session of its own whose parent exits at once:
// beyond /proc tracking, inside the run's cgroup.
const COMMAND =
  `touch ${JOBS.join(' ')}; tail -f ${J1} & nohup tail -f ${J2} >/dev/null 2>&1 & setsid tail -f ${J3} & ` +
  `perl -e 'setpgrp(0,0); exec "tail", "-f", "${J4}"' & sh -c "tail -f ${J5} & exit 0"; ` +
  `sh -c "env -i /usr/bin/setsid /usr/bin/tail -f ${J6} & exit 0"; echo started`;
const SCENARIOS: Record<string, Scenario> = {
  bash_jobs: { kind: 'tool_use', tool: 'Bash', input: { command: COMMAND, description: 'start background jobs' } },
};
const POLL_MS = 50;

/** The jobs alive right now (by their file argument), zombies excluded. */
function liveJobs(): string[] {
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${name}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
      const job = argv[0] === 'tail' || argv[0] === '/usr/bin/tail' ? JOBS.find((j) => argv.includes(j)) : undefined;
      if (job !== undefined && state !== 'Z') found.push(job);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('adapter over the real binary: background jobs of the Bash tool', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier({ scenarios: SCENARIOS });
  });
  after(async () => {
    await tier.close();
  });

  it('cmd &, nohup, setsid, a new process group, a parent that exits at once, a cleared environment: all seen running, none left, confirmed by the cgroup', async () => {
    await inCwd(tier, async (cwd) => {
      const seen = new Set<string>();
      const watch = setInterval(() => {
        for (const job of liveJobs()) seen.add(job);
      }, POLL_MS);
      try {
        const started = await tier.call('claude.run.start', {
          prompt: `jobs ${marker('jobs')} ${promptTag('bash_jobs')}`,
          cwd,
          ask_host: true,
        });
        const runId = String(started.result['run_id']);
        let result = (await tier.call('claude.run.result', { run_id: runId, wait_seconds: 1, detail: 'full' })).result;
        for (let answered = 0; result['completed'] !== true;) {
          const { pending } = questionsOf(result['permission_questions']);
          for (const q of pending) {
            await tier.call('claude.run.answer', { run_id: runId, question_id: q['question_id'], decision: 'allow' });
            answered++;
          }
          assert.ok(answered <= 1, 'one question: the Bash command');
          result = (await tier.call('claude.run.result', { run_id: runId, wait_seconds: 1, detail: 'full' })).result;
        }
        assert.deepEqual(liveJobs(), [], 'nothing the Bash tool started is alive after the run');
        assert.deepEqual([...seen].sort(), [...JOBS], 'every job really ran during the run');
        assert.equal(result['is_error'], false, JSON.stringify(result['error']));
        assert.deepEqual(result['permission_denials'], []);
        assert.equal(result['cleanup_confirmed'], true);
        assert.equal(result['cleanup_proof'], 'cgroup');
      } finally {
        clearInterval(watch);
      }
    });
  });
});
