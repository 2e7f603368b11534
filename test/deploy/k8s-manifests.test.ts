import { expect } from "chai";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { parseAllDocuments, parse } from "yaml";
import { WORKER_GROUP_NAMES } from "../../services/platform/config.ts";
import { DUE_WORK_PROBES } from "../../cli/observability.ts";

const K8S = fileURLToPath(new URL("../../deploy/k8s/", import.meta.url));

interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: any;
  [key: string]: unknown;
}

/** Every document of every YAML file under deploy/k8s (extras included). */
async function loadManifests(): Promise<Manifest[]> {
  const files: string[] = [];
  for (const entry of await readdir(K8S, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && /\.ya?ml$/.test(entry.name) && entry.name !== "kustomization.yaml") files.push(join(entry.parentPath, entry.name));
  }
  const manifests: Manifest[] = [];
  for (const file of files.sort()) {
    for (const doc of parseAllDocuments(await readFile(file, "utf8"))) {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      const value = doc.toJS();
      if (value) manifests.push({ ...value, file: file.slice(K8S.length) });
    }
  }
  return manifests;
}

/**
 * The model class of kubernetes-models for a manifest: its validate() runs the
 * Kubernetes OpenAPI schema (compiled ajv validators shipped in the package,
 * so this works offline after npm ci).
 */
async function modelFor(m: Manifest): Promise<new (data: unknown) => { validate(): void }> {
  const [group, version] = m.apiVersion.includes("/") ? m.apiVersion.split("/") : ["", m.apiVersion];
  const path = group ? `kubernetes-models/${group}/${version}/${m.kind}` : `kubernetes-models/${version}/${m.kind}`;
  const mod = await import(path);
  return mod[m.kind];
}

/** deploy/k8s validated against the Kubernetes schemas (kubernetes-models), and checked for what the issue asks of them. */
describe("deploy/k8s manifests", () => {
  let manifests: Manifest[];
  const of = (kind: string) => manifests.filter((m) => m.kind === kind);
  const named = (kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name);

  before(async () => {
    manifests = await loadManifests();
  });

  it("every manifest is valid against its Kubernetes schema", async () => {
    expect(manifests.length).to.be.greaterThan(10);
    for (const m of manifests) {
      const Model = await modelFor(m);
      const { file: _file, ...data } = m;
      try {
        new Model(data).validate();
      } catch (err) {
        throw new Error(`${m.file} ${m.kind}/${m.metadata.name}: ${(err as Error).message}`);
      }
    }
  });

  it("the schemas do catch a broken manifest", async () => {
    const deployment = structuredClone(named("Deployment", "billing-gateway")!);
    const { file: _file, ...data } = deployment;
    data.spec.template.spec.containers[0].ports[0].containerPort = "http";
    delete data.spec.selector;
    const Model = await modelFor(deployment);
    expect(() => new Model(data).validate()).to.throw(/containerPort must be integer|selector/);
  });

  it("the kustomization lists every file and nothing remote", async () => {
    const kustomization = parse(await readFile(join(K8S, "kustomization.yaml"), "utf8"));
    const listed = new Set<string>(kustomization.resources);
    const files = new Set(manifests.filter((m) => !m.file.startsWith("extras/")).map((m) => m.file));
    expect([...listed].sort()).to.deep.equal([...files].sort());
    for (const r of listed) expect(r).not.to.match(/^(https?:|github\.com|git@)/);
  });

  it("gateway, services, each worker group: a Deployment with probes on /healthz and /readyz, resource requests and a PDB", () => {
    const roles = ["gateway", "services", ...WORKER_GROUP_NAMES];
    for (const role of roles) {
      const name = role === "gateway" || role === "services" ? `billing-${role}` : `billing-workers-${role}`;
      const deployment = named("Deployment", name);
      expect(deployment, name).to.not.equal(undefined);
      const container = deployment!.spec.template.spec.containers[0];
      expect(container.args, name).to.deep.equal(["start", role]);
      expect(container.livenessProbe.httpGet, name).to.include({ path: "/healthz", port: "metrics" });
      expect(container.readinessProbe.httpGet, name).to.include({ path: "/readyz", port: "metrics" });
      expect(container.ports.find((p: { name: string }) => p.name === "metrics").containerPort, name).to.equal(9464);
      expect(container.resources.requests, name).to.have.keys("cpu", "memory");
      const pdb = of("PodDisruptionBudget").find((p) => p.metadata.name === name);
      expect(pdb, `${name} PDB`).to.not.equal(undefined);
      expect(pdb!.spec.selector.matchLabels).to.deep.equal(deployment!.spec.selector.matchLabels);
    }
    const migrate = named("Job", "billing-migrate");
    expect(migrate!.spec.template.spec.containers[0].args).to.deep.equal(["migrate"]);
  });

  it("each worker group has an HPA on billing_due_work_lag_seconds for the kinds it does", () => {
    for (const group of WORKER_GROUP_NAMES) {
      const name = `billing-workers-${group}`;
      const hpa = named("HorizontalPodAutoscaler", name);
      expect(hpa, `${name} HPA`).to.not.equal(undefined);
      expect(hpa!.spec.scaleTargetRef).to.include({ kind: "Deployment", name });
      const kinds = hpa!.spec.metrics.map((m: any) => {
        expect(m.type).to.equal("External");
        expect(m.external.metric.name).to.equal("billing_due_work_lag_seconds");
        return m.external.metric.selector.matchLabels.kind;
      });
      const expected = DUE_WORK_PROBES.filter((p) => p.group === group).map((p) => p.kind);
      expect(kinds.sort(), group).to.deep.equal(expected.sort());
    }
  });
});
