/** Types of node-release.mjs (see there). */
export declare const SQLITE_FOR_NODE_22: string;
/** The home of Node `<release>` (a major, `24`, or a minor line, `20.18`) from the registry's `node-<platform>-<arch>` package, fetched once into node_modules/.cache. */
export declare function nodeReleaseHome(root: string, release: string | number): string;
/** Points node_modules/better-sqlite3 at the release `node` runs (13.x for Node >= 22); without `node`, restores the lockfile's. */
export declare function useSqliteFor(root: string, node?: string): void;
