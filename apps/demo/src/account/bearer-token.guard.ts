import { Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { UserDirectory } from './user-directory.js';

/**
 * Sets `request.user` from `Authorization: Bearer <token>` (a token from `auth.login`). Runs as an
 * APP_GUARD, i.e. per JSON-RPC call and before the module's roles check. No header: anonymous
 * (the roles check decides); a bad token: -32001.
 */
@Injectable()
export class BearerTokenGuard implements CanActivate {
  constructor(private readonly directory: UserDirectory) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    // Already identified: by the MCP endpoint's token verifier (an OAuth JWT, apps/demo/src/mcp-auth.ts).
    if (request.user !== undefined) return true;
    const header = request.headers.authorization as string | undefined;
    if (header === undefined) return true;
    const user = header.startsWith('Bearer ') ? this.directory.byToken(header.slice(7)) : undefined;
    if (!user) throw new UnauthorizedException('Invalid or expired token; call auth.login');
    request.user = user;
    return true;
  }
}
