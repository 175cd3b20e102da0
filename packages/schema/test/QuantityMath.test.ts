import { describe, expect, it } from "vitest"
import * as QuantityMath from "../src/QuantityMath.ts"

describe("QuantityMath.goString, resource.Quantity's canonical form", () => {
  it("writes decimal values with the largest SI suffix that keeps them whole", () => {
    expect(["0.5", "1000m", "1.5", "1000", "10", "5M", 0.1, 1, "250m", "-0.5", "0"].map(QuantityMath.goString))
      .toEqual(["500m", "1", "1500m", "1k", "10", "5M", "100m", "1", "250m", "-500m", "0"])
  })

  it("writes binary values with the largest binary suffix that keeps them whole, small or fractional ones as decimal", () => {
    expect(["1024Mi", "1.5Gi", "2048Mi", "1000Ki", "1Ki", "0.5Ki", "1.5Ki"].map(QuantityMath.goString))
      .toEqual(["1Gi", "1536Mi", "2Gi", "1000Ki", "1Ki", "512", "1536"])
  })

  it("keeps exponents as exponents, and rounds what is finer than a nano up to one", () => {
    expect(["1e3", "1E3", "12e6", "129e6", "1e-3", "0.0000000001"].map(QuantityMath.goString))
      .toEqual(["1e3", "1e3", "12e6", "129e6", "1e-3", "1n"])
  })

  it("sums in the first quantity's format, as Quantity.Add leaves it", () => {
    expect(QuantityMath.sum(["500m", "1"])).toBe("1500m")
    expect(QuantityMath.sum(["128Mi", "128Mi"])).toBe("256Mi")
    expect(QuantityMath.sum(["100M", "1Gi"])).toBe("1173741824")
    expect(QuantityMath.sum(["1", "1", "1"])).toBe("3")
    expect(QuantityMath.sum([])).toBe("0")
  })
})
