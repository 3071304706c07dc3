/** A small router on the History API: paths below /console/, links without page reloads. */
import { useEffect, useState } from "preact/hooks";

export const BASE = "/console";

export function navigate(path: string, replace = false): void {
  const url = path.startsWith(BASE) ? path : `${BASE}${path}`;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** The current path below /console ("/jobs/job_1") and query. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const read = () => ({ path: location.pathname.slice(BASE.length) || "/", query: new URLSearchParams(location.search) });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
  }, []);
  return loc;
}

/** Click handler for in-app links: plain clicks navigate in place; modified clicks open as usual. */
export function linkTo(path: string) {
  return {
    href: `${BASE}${path}`,
    onClick: (e: MouseEvent) => {
      if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      navigate(path);
    },
  };
}
