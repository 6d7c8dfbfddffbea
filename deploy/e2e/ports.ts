import { execFileSync } from 'node:child_process';

/** A TCP port that was free a moment ago (for a service that must keep its port across restarts). */
export function freePortSync(): number {
  const script =
    "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})";
  return Number(execFileSync(process.execPath, ['-e', script]).toString());
}
