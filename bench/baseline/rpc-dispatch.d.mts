/** Types of rpc-dispatch.mjs, for the TypeScript apps that share it. */
export function answer(body: unknown): unknown;
