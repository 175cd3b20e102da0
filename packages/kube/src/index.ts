export * as ObjectMeta from "./ObjectMeta.ts"
export * as Resource from "./Resource.ts"
