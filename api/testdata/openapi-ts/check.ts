// A script written against the types openapi-typescript generates from Taskweave's
// OpenAPI document (schema.d.ts, generated next to a copy of this file by
// TestOpenAPITypeScript in api/openapi_client_test.go, then checked with tsc --strict).
// It is only type-checked, never run: it must keep compiling as the document grows.
import type { components, paths } from "./schema";

type Schemas = components["schemas"];
type JSONBody<T> = T extends { content: { "application/json": infer B } } ? B : never;

type IssuesPath = paths["/api/v1/projects/{key}/issues"];
type IssuePath = paths["/api/v1/projects/{key}/issues/{issueKey}"];
type ActivityPath = paths["/api/v1/projects/{key}/issues/{issueKey}/activity"];

type Register = JSONBody<paths["/api/v1/auth/register"]["post"]["requestBody"]>;
type Auth = JSONBody<paths["/api/v1/auth/register"]["post"]["responses"][201]>;
type CreateProject = JSONBody<paths["/api/v1/projects"]["post"]["requestBody"]>;
type CreateIssue = JSONBody<IssuesPath["post"]["requestBody"]>;
type PatchIssue = JSONBody<IssuePath["patch"]["requestBody"]>;
type IssueList = JSONBody<IssuesPath["get"]["responses"][200]>;
type IssueListQuery = NonNullable<IssuesPath["get"]["parameters"]["query"]>;
type ActivityPage = JSONBody<ActivityPath["get"]["responses"][200]>;
type Problem = Schemas["Problem"];
type SwitchOrg = JSONBody<paths["/api/v1/auth/switch-org/{orgId}"]["post"]["responses"][200]>;

async function call<T>(base: string, method: string, path: string, token: string | null, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  const r = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!r.ok) {
    const p = (await r.json()) as Problem;
    throw new Error(`${p.status} ${p.code} ${p.reason ?? ""}: ${p.message}`);
  }
  return (await r.json()) as T;
}

export async function journey(base: string, key: string, switched?: SwitchOrg): Promise<string[]> {
  const reg: Register = { email: `ts-${key}@example.com`, displayName: "TS", password: "correct horse battery" };
  const auth = await call<Auth>(base, "POST", "/api/v1/auth/register", null, reg);
  const token: string = auth.accessToken;
  const expires: number = auth.expiresIn;
  const project: CreateProject = { key, name: `Project ${key}`, description: null };
  await call<Schemas["ProjectResponse"]>(base, "POST", "/api/v1/projects", token, project);
  const wf = await call<Schemas["Workflow"]>(base, "GET", `/api/v1/projects/${key}/workflow`, token);
  const inProgress = wf.statuses.find((s) => s.category === "IN_PROGRESS");
  if (inProgress === undefined) throw new Error("no IN_PROGRESS status");
  const create: CreateIssue = { title: "Typed", type: "BUG", priority: "HIGH", labelIds: [] };
  const issue = await call<Schemas["IssueResponse"]>(base, "POST", `/api/v1/projects/${key}/issues`, token, create);
  const move: PatchIssue = { statusId: inProgress.id };
  const moved = await call<Schemas["IssueResponse"]>(base, "PATCH", `/api/v1/projects/${key}/issues/${issue.key}`, token, move);
  const sla: string | null = moved.slaStartTime;
  const query: IssueListQuery = { statusId: inProgress.id, priority: "HIGH", size: 10 };
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  const page = await call<IssueList>(base, "GET", `/api/v1/projects/${key}/issues?${qs}`, token);
  const keys: string[] = page.content.map((i) => i.key);
  const activity = await call<ActivityPage>(base, "GET", `/api/v1/projects/${key}/issues/${issue.key}/activity?size=10`, token);
  const types: Schemas["ActivityType"][] = activity.content.map((a) => a.type);
  return [...keys, ...types, String(expires), sla ?? "", switched?.tokenType ?? ""];
}
