import { connect } from 'node:net';

/**
 * sandbox-container's PortService.checkPortReady: an HTTP GET whose status
 * must fall in [statusMin, statusMax], or a bare TCP connect, each bounded
 * by 5 s. `port` here is already the host port.
 */
export interface ReadinessCheck {
  port: number;
  mode: 'http' | 'tcp';
  path: string;
  statusMin: number;
  statusMax: number;
}

const CHECK_TIMEOUT_MS = 5_000;

export async function checkReady(check: ReadinessCheck): Promise<{ ready: boolean; statusCode?: number }> {
  if (check.mode === 'tcp') return { ready: await tcpOpen(check.port) };
  try {
    const path = check.path.startsWith('/') ? check.path : `/${check.path}`;
    const response = await fetch(`http://127.0.0.1:${check.port}${path}`, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    await response.body?.cancel();
    return { ready: response.status >= check.statusMin && response.status <= check.statusMax, statusCode: response.status };
  } catch {
    return { ready: false };
  }
}

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, timeout: CHECK_TIMEOUT_MS });
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
