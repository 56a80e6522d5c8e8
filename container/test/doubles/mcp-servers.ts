/**
 * The CLI doubles' MCP client side: what Claude Code and Codex do with the
 * streamable-HTTP MCP servers they are configured with (the adapters' tool
 * bridge among them). Connected at startup, tools listed, calls made with
 * `@modelcontextprotocol/sdk`'s own client and the configured headers (the
 * bridge's bearer token), as the real CLIs do.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface HttpMcpServer {
  name: string;
  url: string;
  headers: Record<string, string>;
}

export interface McpServerStatus {
  name: string;
  status: 'connected' | 'failed';
  tools: string[];
}

/** A `tools/call` answer, its text blocks joined (what both CLIs show their model). */
export interface McpCallOutcome {
  isError: boolean;
  text: string;
  content: { type: 'text'; text: string }[];
}

/** Claude Code's default per-call limit (MCP_TOOL_TIMEOUT unset): 10^8 ms. The SDK's own default is 60 s. */
const CALL_TIMEOUT_MS = 100_000_000;

export class McpServers {
  readonly statuses: McpServerStatus[];
  readonly #clients: Map<string, Client>;

  private constructor(statuses: McpServerStatus[], clients: Map<string, Client>) {
    this.statuses = statuses;
    this.#clients = clients;
  }

  /** Connects to every server; one that cannot be reached is `failed`, as the CLIs report it, and the run goes on. */
  static async connect(servers: readonly HttpMcpServer[], clientInfo: { name: string; version: string }): Promise<McpServers> {
    const clients = new Map<string, Client>();
    const statuses = await Promise.all(
      servers.map(async ({ name, url, headers }): Promise<McpServerStatus> => {
        const client = new Client(clientInfo);
        try {
          await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
          const { tools } = await client.listTools();
          clients.set(name, client);
          return { name, status: 'connected', tools: tools.map((tool) => tool.name) };
        } catch (error) {
          process.stderr.write(`MCP server "${name}" failed to connect: ${error instanceof Error ? error.message : String(error)}\n`);
          return { name, status: 'failed', tools: [] };
        }
      }),
    );
    return new McpServers(statuses, clients);
  }

  has(server: string, tool: string): boolean {
    return this.statuses.some((status) => status.name === server && status.tools.includes(tool));
  }

  async call(server: string, tool: string, input: Record<string, unknown>, meta: Record<string, unknown> = {}): Promise<McpCallOutcome> {
    const client = this.#clients.get(server);
    if (client === undefined) throw new Error(`MCP server "${server}" is not connected`);
    const result = await client.callTool({ name: tool, arguments: input, _meta: meta }, undefined, { timeout: CALL_TIMEOUT_MS });
    const blocks = Array.isArray(result.content) ? (result.content as { type?: unknown; text?: unknown }[]) : [];
    const content = blocks.flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [{ type: 'text' as const, text: block.text }] : []));
    return { isError: result.isError === true, text: content.map((block) => block.text).join(''), content };
  }

  async close(): Promise<void> {
    await Promise.all([...this.#clients.values()].map((client) => client.close()));
  }
}
