/**
 * Websites: an operator built only from a workflow. A Website (`spec: { content, replicas?, image? }`)
 * becomes three objects, in order: a ConfigMap holding the page, an nginx Deployment serving it
 * (ready once its rollout is complete), and a Service, created only once the Deployment is ready.
 * The Website's status has one condition per node (`ContentReady`, `DeploymentReady`,
 * `ServiceReady`) and `Ready`, which says what waits until everything is up. Deleting a Website
 * deletes the three in reverse order before it goes.
 */
import { Builtins, Conditions, Controller, Dependent, Resource, Workflow } from "@kubefx/kube"
import { Schema } from "effect"

export const Website = Resource.custom({
  group: "demo.kubefx.dev",
  version: "v1",
  kind: "Website",
  plural: "websites",
  shortNames: ["site"],
  spec: Schema.Struct({
    /** The page, served as index.html. */
    content: Schema.String,
    replicas: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
    image: Schema.optionalKey(Schema.String)
  }),
  status: Schema.Struct(Conditions.statusFields),
  printerColumns: [
    { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
    { name: "Service", type: "string", jsonPath: ".status.conditions[?(@.type==\"ServiceReady\")].reason" },
    { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].status" }
  ]
})
export type Website = typeof Website.schema.Type

/** The image served when the spec names none. */
export const defaultImage = "nginx:1.27-alpine"

type Site = Controller.Stored<Website>

const selector = (site: Site) => ({ "app.kubernetes.io/name": "website", "app.kubernetes.io/instance": site.metadata.name })

/** The page, in a ConfigMap named `<website>-content`. */
export const content = Dependent.make({
  name: "content",
  resource: Builtins.ConfigMap,
  desired: (site: Site) => ({
    metadata: { name: `${site.metadata.name}-content`, labels: selector(site) },
    data: { "index.html": site.spec.content }
  })
})

/** nginx serving the page; a digest of the page in the pod template rolls the pods when it changes. */
export const deployment = Dependent.make({
  name: "deployment",
  resource: Builtins.Deployment,
  ready: Dependent.deploymentReady,
  desired: (site: Site) => ({
    metadata: { name: site.metadata.name, labels: selector(site) },
    spec: {
      replicas: site.spec.replicas ?? 1,
      selector: { matchLabels: selector(site) },
      template: {
        metadata: { labels: selector(site), annotations: { "demo.kubefx.dev/content-digest": Dependent.digest(site.spec.content) } },
        spec: {
          containers: [{
            name: "nginx",
            image: site.spec.image ?? defaultImage,
            ports: [{ name: "http", containerPort: 80 }],
            volumeMounts: [{ name: "content", mountPath: "/usr/share/nginx/html", readOnly: true }]
          }],
          volumes: [{ name: "content", configMap: { name: `${site.metadata.name}-content` } }]
        }
      }
    }
  })
})

/** The Service in front of the pods. */
export const service = Dependent.make({
  name: "service",
  resource: Builtins.Service,
  desired: (site: Site) => ({
    metadata: { name: site.metadata.name, labels: selector(site) },
    spec: { selector: selector(site), ports: [{ name: "http", port: 80, targetPort: "http" }] }
  })
})

/** The whole operator: the Service needs the Deployment ready, which needs the page. */
export const workflow = Workflow.sequence(content, deployment, service)

/** The websites controller: nothing but the workflow. */
export const definition = Controller.define({
  name: "websites",
  for: Website,
  concurrency: 4,
  ...Workflow.controller(workflow)
})

/** The custom resources this example serves, for CRD installation. */
export const resources = [Website]

/** Where its sample objects are. */
export const samples = new URL("../samples/", import.meta.url)
