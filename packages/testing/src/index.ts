/**
 * @kubefx/testing: the Effect-native test kit for kubefx operators.
 *
 * @since 0.1.0
 */
export * as Await from "./Await.ts"
export * as Events from "./Events.ts"
export * as Samples from "./Samples.ts"
export * as ServerMetrics from "./ServerMetrics.ts"
export * as TestCluster from "./TestCluster.ts"
