export * as ApiServer from "./ApiServer.ts"
export * as Faults from "./Faults.ts"
export * as Testing from "./Testing.ts"
export * as WorkloadSimulator from "./WorkloadSimulator.ts"
