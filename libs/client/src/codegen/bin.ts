#!/usr/bin/env node
// The `nest-jsonrpc-client` bin (package.json "bin").
import { runCli } from './cli.js';

process.exitCode = await runCli(process.argv.slice(2));
