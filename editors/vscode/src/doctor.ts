// "ThreadRadar: Doctor": runs `threadradar doctor --json` (the server binary the extension found)
// in the workspace folder and shows its checks as a Markdown document: what this machine allows
// before a recording fails (ptrace, perf events, the configuration), each problem with its next
// step. The rendering is pure; the command itself is in extension.ts.

export interface DoctorCheck {
  id: string;
  status: "ok" | "warn" | "error";
  summary: string;
  next?: string;
}

export interface DoctorReport {
  version: string;
  pid: number | null;
  ok: boolean;
  checks: DoctorCheck[];
}

/** `threadradar doctor --json`'s output, checked; one sentence when it is not that. */
export function parseDoctor(stdout: string): DoctorReport | string {
  let v: unknown;
  try {
    v = JSON.parse(stdout);
  } catch {
    return "`threadradar doctor --json` did not print JSON: update the threadradar binary (doctor is new in this version)";
  }
  const r = v as Partial<DoctorReport>;
  if (typeof r !== "object" || r === null || !Array.isArray(r.checks) || typeof r.ok !== "boolean") {
    return "`threadradar doctor --json` printed something else than its report: update the threadradar binary";
  }
  const checks = r.checks.filter(
    (c): c is DoctorCheck => typeof c === "object" && c !== null && typeof c.id === "string" && typeof c.summary === "string" && ["ok", "warn", "error"].includes(c.status as string),
  );
  return { version: typeof r.version === "string" ? r.version : "?", pid: typeof r.pid === "number" ? r.pid : null, ok: r.ok, checks };
}

const MARK: Record<DoctorCheck["status"], string> = { ok: "✅", warn: "⚠️", error: "❌" };

/** The report as Markdown; `binary` and `source` say which binary answered and where it was found. */
export function doctorMarkdown(r: DoctorReport, binary: string, source: string): string {
  const lines = [`# ThreadRadar doctor`, ``, `\`${binary}\` (${r.version}), found in ${source}.`, ``];
  for (const c of r.checks) {
    lines.push(`- ${MARK[c.status]} **${c.id}**: ${c.summary}`);
    if (c.next !== undefined) lines.push(`  - *Next:* ${c.next}`);
  }
  const errors = r.checks.filter((c) => c.status === "error").length;
  lines.push(``, errors === 0 ? `Nothing stops a recording here.` : `${errors} problem(s) will stop a recording: see *Next* above.`, ``);
  return lines.join("\n");
}
