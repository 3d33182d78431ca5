// `@nest-jsonrpc/client/codegen`: the typed-client generator, which lives in @nest-jsonrpc/codegen
// (libs/codegen) so that the browser client installs without it. This subpath stays for code that
// imported it from here; it needs @nest-jsonrpc/codegen installed (an optional peer dependency).
export * from '@nest-jsonrpc/codegen';
