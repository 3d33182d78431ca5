import { Injectable } from '@nestjs/common';
import { RpcMcp, RpcMethod, RpcStream, progress, type RpcContext } from '@nest-jsonrpc/server';
import { GenerateReportDto, ReportRow } from './reports.dto.js';

const STAGES = ['collecting invoices', 'reconciling payments', 'computing totals', 'rendering PDF'];

const wait = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });

@Injectable()
export class ReportsRpc {
  /**
   * A durable stream: `POST /rpc` answers `{stream_id, sse_url, status}` at once, the report is
   * built in the background, and its progress can be watched (and resumed) at `sse_url`. Over MCP
   * it is a task for clients that support tasks: they poll it (progress as its status message) and
   * read the report row when it is done.
   */
  @RpcMethod('report.generate', {
    summary: 'Builds a report in the background (a durable stream)',
    description: 'Answers {stream_id, sse_url, status} at once; attach to sse_url for progress events ({percent, stage}) and the report row.',
    tags: ['streams'],
  })
  @RpcStream({ durable: true, row: ReportRow })
  @RpcMcp({ title: 'Generate a report' })
  async *generate(p: GenerateReportDto, ctx: RpcContext) {
    const steps = p.steps ?? 20;
    const delayMs = p.delayMs ?? 500;
    for (let step = 1; step <= steps; step++) {
      await wait(delayMs, ctx.signal);
      if (ctx.signal.aborted) return;
      const stage = STAGES[Math.min(STAGES.length - 1, Math.floor(((step - 1) / steps) * STAGES.length))];
      yield progress({ percent: Math.round((step / steps) * 100), stage });
    }
    yield { report: `/reports/${ctx.requestId}.pdf`, pages: steps * 3 };
  }
}
