/**
 * Live updates: one EventSource per signed-in tab on /console/api/events. Pages subscribe with
 * useJobChanges and reload what they show when one of their jobs changed. Pages that show what
 * no event announces (Operations) poll with useRepeating.
 */
import { useEffect, useRef, useState } from "preact/hooks";

type Listener = (ids: string[]) => void;
const listeners = new Set<Listener>();
const stateListeners = new Set<(live: boolean) => void>();
let live = false;

function setLive(value: boolean) {
  live = value;
  for (const l of stateListeners) l(value);
}

export function startLiveUpdates(): () => void {
  const source = new EventSource("/console/api/events");
  source.onopen = () => setLive(true);
  source.onerror = () => setLive(false);
  source.addEventListener("jobs", (e) => {
    const { ids } = JSON.parse((e as MessageEvent<string>).data) as { ids: string[] };
    for (const l of listeners) l(ids);
  });
  source.addEventListener("stalled", () => setLive(false));
  return () => {
    source.close();
    setLive(false);
  };
}

/** Calls `onChange` (at most every 500 ms) with the ids of jobs that changed. */
export function useJobChanges(onChange: Listener): void {
  const latest = useRef(onChange);
  latest.current = onChange;
  useEffect(() => {
    let pending: string[] = [];
    let timer: number | undefined;
    const l: Listener = (ids) => {
      pending.push(...ids);
      if (timer !== undefined) return;
      timer = window.setTimeout(() => {
        const batch = pending;
        pending = [];
        timer = undefined;
        latest.current(batch);
      }, 500);
    };
    listeners.add(l);
    return () => {
      listeners.delete(l);
      if (timer !== undefined) clearTimeout(timer);
    };
  }, []);
}

export function useLiveState(): boolean {
  const [value, set] = useState(live);
  useEffect(() => {
    stateListeners.add(set);
    set(live);
    return () => void stateListeners.delete(set);
  }, []);
  return value;
}

/**
 * Runs `task` at once, then `everyMs` after each run has ended, until the component goes or
 * `everyMs` changes. `alive()` says whether the component still wants the result; the task
 * handles its own errors.
 */
export function useRepeating(task: (alive: () => boolean) => Promise<void>, everyMs: number): void {
  const latest = useRef(task);
  latest.current = task;
  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    const run = async () => {
      await latest.current(() => !stopped);
      if (!stopped) timer = window.setTimeout(run, everyMs);
    };
    void run();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [everyMs]);
}
