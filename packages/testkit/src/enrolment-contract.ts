import type { EnrolmentRecord, InstanceCredential } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, MINUTE, T0 } from './contract-part.js'

/** An enrolment token's record (hash `h-<id>`), one use, live for an hour from T0. */
export const enrolmentRecord = (id: string, overrides: Partial<EnrolmentRecord> = {}): EnrolmentRecord => ({
  id,
  hash: `h-${id}`,
  resourceServer: 'fleet',
  uses: 1,
  left: 1,
  createdAt: T0,
  expiresAt: T0 + 60 * MINUTE,
  instance: null,
  groups: ['line-3', 'Zoë'],
  createdBy: 'alice',
  ...overrides,
})

/** An instance's fresh credential of `fleet`. */
export const instanceCredential = (
  instance: string,
  overrides: Partial<InstanceCredential> = {},
): InstanceCredential => ({
  instance,
  resourceServer: 'fleet',
  secretHash: `s-${instance}`,
  nextHash: null,
  enrolledAt: T0,
  enrolledBy: 'alice',
  rotateAsked: false,
  rotatedAt: null,
  revokedAt: null,
  ...overrides,
})

/** The enrolment store's part of the store contract: tokens, their uses, credentials and their life. */
export const describeEnrolmentContract: ContractPart = (stores, twoConnections) => {
  describe('enrolments: tokens', () => {
    it('saves, finds by hash, lists oldest first and deletes by id', async () => {
      const store = stores().enrolments
      await store.saveEnrolment(enrolmentRecord('b', { createdAt: T0 + 1, uses: 5, left: 5, instance: null }))
      await store.saveEnrolment(enrolmentRecord('a', { instance: 'nr-1' }))
      expect(await store.findEnrolment('h-a')).toEqual(enrolmentRecord('a', { instance: 'nr-1' }))
      expect(await store.findEnrolment('h-z')).toBeNull()
      expect((await store.enrolments()).map((record) => record.id)).toEqual(['a', 'b'])
      expect(await store.deleteEnrolment('a')).toBe(true)
      expect(await store.deleteEnrolment('a')).toBe(false)
      expect(await store.findEnrolment('h-a')).toBeNull()
    })

    it('deletes spent and expired tokens, up to a limit, and keeps live ones', async () => {
      const store = stores().enrolments
      await store.saveEnrolment(enrolmentRecord('live'))
      await store.saveEnrolment(enrolmentRecord('spent', { left: 0 }))
      await store.saveEnrolment(enrolmentRecord('expired', { expiresAt: T0 }))
      expect(await store.deleteSpentEnrolments(T0, 1)).toBe(1)
      expect(await store.deleteSpentEnrolments(T0, 10)).toBe(1)
      expect((await store.enrolments()).map((record) => record.id)).toEqual(['live'])
    })
  })

  describe('enrolments: enrol', () => {
    it('spends one use and saves the credential; a spent or expired token changes nothing', async () => {
      const store = stores().enrolments
      await store.saveEnrolment(enrolmentRecord('two', { uses: 2, left: 2 }))
      expect(await store.enrol('h-two', instanceCredential('nr-1'), 10, T0)).toBe('enrolled')
      expect((await store.findEnrolment('h-two'))?.left).toBe(1)
      expect(await store.credential('nr-1')).toEqual(instanceCredential('nr-1'))
      expect(await store.enrol('h-two', instanceCredential('nr-2'), 10, T0 + 60 * MINUTE)).toBe('spent')
      expect(await store.enrol('h-two', instanceCredential('nr-2'), 10, T0)).toBe('enrolled')
      expect(await store.enrol('h-two', instanceCredential('nr-3'), 10, T0)).toBe('spent')
      expect(await store.enrol('h-unknown', instanceCredential('nr-3'), 10, T0)).toBe('spent')
      expect(await store.credential('nr-3')).toBeNull()
      expect((await store.credentials()).map((credential) => credential.instance)).toEqual(['nr-1', 'nr-2'])
    })

    it('refuses an id held by a live credential, and a full resource server, spending nothing', async () => {
      const store = stores().enrolments
      await store.saveEnrolment(enrolmentRecord('many', { uses: 10, left: 10 }))
      expect(await store.enrol('h-many', instanceCredential('nr-1'), 2, T0)).toBe('enrolled')
      expect(await store.enrol('h-many', instanceCredential('nr-1', { secretHash: 'copy' }), 2, T0)).toBe(
        'conflict',
      )
      expect((await store.credential('nr-1'))?.secretHash).toBe('s-nr-1')
      expect(await store.enrol('h-many', instanceCredential('nr-2'), 2, T0)).toBe('enrolled')
      expect(await store.enrol('h-many', instanceCredential('nr-3'), 2, T0)).toBe('full')
      // Another resource server's count is its own.
      expect(
        await store.enrol('h-many', instanceCredential('nr-4', { resourceServer: 'other' }), 2, T0),
      ).toBe('enrolled')
      expect((await store.findEnrolment('h-many'))?.left).toBe(7)
    })

    it('a revoked id may enrol again, replacing its record, and no longer counts as held', async () => {
      const store = stores().enrolments
      await store.saveEnrolment(enrolmentRecord('many', { uses: 10, left: 10 }))
      expect(await store.enrol('h-many', instanceCredential('nr-1'), 1, T0)).toBe('enrolled')
      expect(await store.revoke('nr-1', 'fleet', T0 + 1)).toBe(true)
      const again = instanceCredential('nr-1', { secretHash: 'new', enrolledAt: T0 + 2 })
      expect(await store.enrol('h-many', again, 1, T0 + 2)).toBe('enrolled')
      expect(await store.credential('nr-1')).toEqual(again)
    })

    it('of racing enrolments with a one-use token, exactly one enrols', async () => {
      const racing = await twoConnections()
      await racing(0).enrolments.saveEnrolment(enrolmentRecord('once'))
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          racing(i).enrolments.enrol('h-once', instanceCredential(`nr-${i}`), 100, T0),
        ),
      )
      expect(outcomes.filter((outcome) => outcome === 'enrolled')).toHaveLength(1)
      expect(outcomes.filter((outcome) => outcome === 'spent')).toHaveLength(7)
      expect(await racing(1).enrolments.credentials()).toHaveLength(1)
    })

    it('of racing enrolments of one id with two tokens, exactly one takes it', async () => {
      const racing = await twoConnections()
      await racing(0).enrolments.saveEnrolment(enrolmentRecord('a'))
      await racing(0).enrolments.saveEnrolment(enrolmentRecord('b'))
      const outcomes = await Promise.all([
        racing(0).enrolments.enrol('h-a', instanceCredential('nr-1', { secretHash: 'a' }), 100, T0),
        racing(1).enrolments.enrol('h-b', instanceCredential('nr-1', { secretHash: 'b' }), 100, T0),
      ])
      expect([...outcomes].sort()).toEqual(['conflict', 'enrolled'])
      const left = [
        (await racing(0).enrolments.findEnrolment('h-a'))?.left,
        (await racing(0).enrolments.findEnrolment('h-b'))?.left,
      ]
      expect([...left].sort()).toEqual([0, 1])
    })
  })

  describe('enrolments: credentials', () => {
    it('rotates: a waiting secret becomes the only one when promoted, and only the waiting one', async () => {
      const store = stores().enrolments
      await store.saveEnrolment(enrolmentRecord('t'))
      await store.enrol('h-t', instanceCredential('nr-1'), 10, T0)
      expect(await store.askRotate('nr-1')).toBe(true)
      expect(await store.askRotate('nr-9')).toBe(false)
      expect(await store.setNext('nr-1', 'next-1')).toBe(true)
      expect(await store.setNext('nr-1', 'next-2')).toBe(true)
      expect(await store.setNext('nr-9', 'x')).toBe(false)
      expect(await store.credential('nr-1')).toMatchObject({
        secretHash: 's-nr-1',
        nextHash: 'next-2',
        rotateAsked: true,
      })
      expect(await store.promote('nr-1', 'next-1', T0 + 5)).toBe(false)
      expect(await store.promote('nr-1', 'next-2', T0 + 5)).toBe(true)
      expect(await store.promote('nr-1', 'next-2', T0 + 6)).toBe(false)
      expect(await store.credential('nr-1')).toMatchObject({
        secretHash: 'next-2',
        nextHash: null,
        rotateAsked: false,
        rotatedAt: T0 + 5,
      })
    })

    it('revokes once: the waiting secret goes, nothing more changes it; an unknown id gets a revoked record', async () => {
      const store = stores().enrolments
      await store.saveEnrolment(enrolmentRecord('t'))
      await store.enrol('h-t', instanceCredential('nr-1'), 10, T0)
      await store.setNext('nr-1', 'next')
      expect(await store.revoke('nr-1', 'fleet', T0 + 1)).toBe(true)
      expect(await store.revoke('nr-1', 'fleet', T0 + 2)).toBe(false)
      expect(await store.credential('nr-1')).toMatchObject({ revokedAt: T0 + 1, nextHash: null })
      expect(await store.setNext('nr-1', 'other')).toBe(false)
      expect(await store.promote('nr-1', 'next', T0 + 3)).toBe(false)
      expect(await store.askRotate('nr-1')).toBe(false)
      expect(await store.revoke('shared-1', 'fleet', T0 + 4)).toBe(true)
      expect(await store.credential('shared-1')).toEqual(
        instanceCredential('shared-1', {
          secretHash: '',
          enrolledAt: T0 + 4,
          enrolledBy: null,
          revokedAt: T0 + 4,
        }),
      )
    })
  })
}
