import { assert, describe, it } from "@effect/vitest"
import { Shards } from "@kubefx/core"

const keys = Array.from({ length: 3000 }, (_, i) => `default/widget-${i}`)
const owners = (ring: Shards.Ring) => keys.map((key) => Shards.owner(ring, key))
const placement = (owner?: string, draining?: string, acknowledged?: string): Shards.Placement => ({ owner, draining, acknowledged })

describe("Shards", () => {
  it("the same members in any order give the same owners, and every member gets a share", () => {
    const a = owners(Shards.ring(["r-1", "r-2", "r-3"]))
    const b = owners(Shards.ring(["r-3", "r-1", "r-2", "r-1"]))
    assert.deepStrictEqual(a, b)
    for (const member of ["r-1", "r-2", "r-3"]) {
      const share = a.filter((owner) => owner === member).length / keys.length
      assert.isAbove(share, 0.3, `${member} owns ${share}`)
      assert.isBelow(share, 0.37, `${member} owns ${share}`)
    }
    assert.isUndefined(Shards.owner(Shards.ring([]), "default/a"))
  })

  it("adding a member moves about 1/N of the keys, all of them to the new member", () => {
    const before = owners(Shards.ring(["r-1", "r-2", "r-3"]))
    const after = owners(Shards.ring(["r-1", "r-2", "r-3", "r-4"]))
    const moved = keys.filter((_, i) => before[i] !== after[i])
    assert.isTrue(moved.every((key) => after[keys.indexOf(key)] === "r-4"))
    assert.isAbove(moved.length, keys.length * 0.2)
    assert.isBelow(moved.length, keys.length * 0.3)
  })

  it("removing a member moves only its keys", () => {
    const before = owners(Shards.ring(["r-1", "r-2", "r-3"]))
    const after = owners(Shards.ring(["r-1", "r-3"]))
    keys.forEach((_, i) => {
      if (before[i] !== "r-2") assert.strictEqual(after[i], before[i])
      else assert.notStrictEqual(after[i], "r-2")
    })
  })

  describe("decide", () => {
    const ring = Shards.ring(["r-1", "r-2"])
    const key = keys.find((k) => Shards.owner(ring, k) === "r-2")!

    it("assigns a key nobody owns, or whose owner is gone, at once", () => {
      assert.deepStrictEqual(Shards.decide(key, placement(), ring), { _tag: "Assign", to: "r-2" })
      assert.deepStrictEqual(Shards.decide(key, placement("r-9", "r-1"), ring), { _tag: "Assign", to: "r-2" })
    })

    it("drains a key from a live owner the ring no longer names, and moves it only once that owner acknowledged", () => {
      assert.deepStrictEqual(Shards.decide(key, placement("r-1"), ring), { _tag: "Drain", to: "r-2" })
      assert.deepStrictEqual(Shards.decide(key, placement("r-1", "r-2"), ring), { _tag: "Keep" })
      // an acknowledgement by anyone but the owner does not count
      assert.deepStrictEqual(Shards.decide(key, placement("r-1", "r-2", "r-2"), ring), { _tag: "Keep" })
      assert.deepStrictEqual(Shards.decide(key, placement("r-1", "r-2", "r-1"), ring), { _tag: "Assign", to: "r-2" })
    })

    it("redirects a drain when the ring changed meanwhile, and cancels it when the key belongs to its owner again", () => {
      const three = Shards.ring(["r-1", "r-2", "r-3"])
      const third = keys.find((k) => Shards.owner(three, k) === "r-3")!
      assert.deepStrictEqual(Shards.decide(third, placement("r-1", "r-2"), three), { _tag: "Drain", to: "r-3" })
      assert.deepStrictEqual(Shards.decide(key, placement("r-2", "r-1"), ring), { _tag: "Cancel" })
      assert.deepStrictEqual(Shards.decide(key, placement("r-2", undefined, "r-2"), ring), { _tag: "Cancel" })
      assert.deepStrictEqual(Shards.decide(key, placement("r-2"), ring), { _tag: "Keep" })
    })

    it("keeps everything where it is while no member is live", () => {
      assert.deepStrictEqual(Shards.decide(key, placement("r-1"), Shards.ring([])), { _tag: "Keep" })
    })
  })
})
