import type { PasswordPassed } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, MINUTE, T0 } from './contract-part.js'

/** The factor store's part of the store contract. */
export const describeFactorContract: ContractPart = (stores, twoConnections) => {
  describe('factors', () => {
    it('keeps an enrolment unconfirmed until one code confirms it, then keeps it', async () => {
      expect(await stores().factors.findTotp('alice')).toBeNull()
      expect(await stores().factors.startTotp('alice', 'sealed-1', T0)).toBe(true)
      expect(await stores().factors.findTotp('alice')).toEqual({
        username: 'alice',
        secret: 'sealed-1',
        createdAt: T0,
        confirmedAt: null,
        confirmedAtSignIn: false,
        lastStep: null,
      })
      // An unconfirmed factor accepts no step, and a new enrolment replaces it.
      expect(await stores().factors.useTotpStep('alice', 100)).toBe(false)
      expect(await stores().factors.startTotp('alice', 'sealed-2', T0 + MINUTE)).toBe(true)
      // The code was checked against the replaced secret: not confirmed.
      expect(await stores().factors.confirmTotp('alice', 'sealed-1', 100, T0 + MINUTE, false)).toBe(false)
      expect(await stores().factors.confirmTotp('alice', 'sealed-2', 100, T0 + 2 * MINUTE, false)).toBe(true)
      expect(await stores().factors.confirmTotp('alice', 'sealed-2', 101, T0 + 2 * MINUTE, true)).toBe(false)
      expect(await stores().factors.findTotp('alice')).toEqual({
        username: 'alice',
        secret: 'sealed-2',
        createdAt: T0 + MINUTE,
        confirmedAt: T0 + 2 * MINUTE,
        confirmedAtSignIn: false,
        lastStep: 100,
      })
      // A confirmed factor is not replaced by a new enrolment.
      expect(await stores().factors.startTotp('alice', 'sealed-3', T0 + 3 * MINUTE)).toBe(false)
      expect((await stores().factors.findTotp('alice'))?.secret).toBe('sealed-2')
      expect(await stores().factors.findTotp('bob')).toBeNull()
    })

    it('records whether a factor was confirmed during a sign-in, and forgets it with the factor', async () => {
      await stores().factors.startTotp('dora', 'sealed-1', T0)
      expect(await stores().factors.confirmTotp('dora', 'sealed-1', 7, T0 + MINUTE, true)).toBe(true)
      expect(await stores().factors.findTotp('dora')).toMatchObject({
        confirmedAt: T0 + MINUTE,
        confirmedAtSignIn: true,
      })
      expect(await stores().factors.deleteFactors('dora')).toBe(true)
      await stores().factors.startTotp('dora', 'sealed-2', T0 + 2 * MINUTE)
      expect(await stores().factors.findTotp('dora')).toMatchObject({ confirmedAtSignIn: false })
      expect(await stores().factors.confirmTotp('dora', 'sealed-2', 8, T0 + 3 * MINUTE, false)).toBe(true)
      expect(await stores().factors.findTotp('dora')).toMatchObject({ confirmedAtSignIn: false })
    })

    it('accepts each step once and never an earlier one, whichever connection asks', async () => {
      const racing = await twoConnections()
      await stores().factors.startTotp('alice', 'sealed', T0)
      await stores().factors.confirmTotp('alice', 'sealed', 100, T0, false)
      expect(await racing(1).factors.useTotpStep('alice', 100)).toBe(false)
      expect(await racing(1).factors.useTotpStep('alice', 99)).toBe(false)
      expect(await racing(1).factors.useTotpStep('alice', 101)).toBe(true)
      expect(await stores().factors.useTotpStep('alice', 101)).toBe(false)
      expect(await stores().factors.useTotpStep('alice', 103)).toBe(true)
      expect(await racing(1).factors.useTotpStep('alice', 102)).toBe(false)
      expect((await racing(1).factors.findTotp('alice'))?.lastStep).toBe(103)
      expect(await stores().factors.useTotpStep('nobody', 104)).toBe(false)
    })

    it('accepts a step offered at once on both connections exactly once', async () => {
      const racing = await twoConnections()
      await stores().factors.startTotp('carol', 'sealed', T0)
      await stores().factors.confirmTotp('carol', 'sealed', 10, T0, false)
      for (const step of [11, 12, 13]) {
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) => racing(i).factors.useTotpStep('carol', step)),
        )
        expect(answers.filter(Boolean)).toHaveLength(1)
      }
      expect((await stores().factors.findTotp('carol'))?.lastStep).toBe(13)
    })

    it('uses up each recovery code once, even when offered at once on both connections', async () => {
      const racing = await twoConnections()
      const hashes = Array.from({ length: 10 }, (_, i) => `hash-${i}`)
      await stores().factors.replaceRecoveryCodes('dan', hashes, T0)
      expect(await stores().factors.countRecoveryCodes('dan')).toBe(10)
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => racing(i).factors.useRecoveryCode('dan', 'hash-3')),
      )
      expect(answers.filter(Boolean)).toHaveLength(1)
      expect(await racing(1).factors.countRecoveryCodes('dan')).toBe(9)
      expect(await stores().factors.useRecoveryCode('dan', 'hash-3')).toBe(false)
      expect(await stores().factors.useRecoveryCode('dan', 'unknown')).toBe(false)
      // Another person's code is not this person's.
      expect(await stores().factors.useRecoveryCode('erin', 'hash-4')).toBe(false)
      expect(await stores().factors.useRecoveryCode('dan', 'hash-4')).toBe(true)
      // New codes replace the old ones, all of them.
      await stores().factors.replaceRecoveryCodes('dan', ['new-1', 'new-2'], T0 + MINUTE)
      expect(await stores().factors.countRecoveryCodes('dan')).toBe(2)
      expect(await stores().factors.useRecoveryCode('dan', 'hash-5')).toBe(false)
      expect(await stores().factors.useRecoveryCode('dan', 'new-2')).toBe(true)
    })

    it('deletes every factor of one person, and only theirs', async () => {
      for (const name of ['frank', 'grace']) {
        await stores().factors.startTotp(name, `sealed-${name}`, T0)
        await stores().factors.confirmTotp(name, `sealed-${name}`, 5, T0, false)
        await stores().factors.replaceRecoveryCodes(name, ['a', 'b'], T0)
      }
      expect(await stores().factors.deleteFactors('frank')).toBe(true)
      expect(await stores().factors.deleteFactors('frank')).toBe(false)
      expect(await stores().factors.findTotp('frank')).toBeNull()
      expect(await stores().factors.countRecoveryCodes('frank')).toBe(0)
      expect(await stores().factors.useRecoveryCode('frank', 'a')).toBe(false)
      expect((await stores().factors.findTotp('grace'))?.lastStep).toBe(5)
      expect(await stores().factors.countRecoveryCodes('grace')).toBe(2)
      // A new enrolment may begin again.
      expect(await stores().factors.startTotp('frank', 'sealed-again', T0 + MINUTE)).toBe(true)
    })

    const pendingSignIn = (overrides: Partial<PasswordPassed> = {}): PasswordPassed => ({
      username: 'alice',
      clientId: 'service-admin',
      scope: ['*'],
      address: '10.0.0.1',
      agent: 'Firefox 140 on Linux',
      createdAt: T0,
      expiresAt: T0 + MINUTE,
      ...overrides,
    })

    it('gives a pending sign-in back once, whichever connection asks, until its time ends', async () => {
      const racing = await twoConnections()
      await stores().factors.savePendingSignIn('ticket-1', pendingSignIn())
      await stores().factors.savePendingSignIn(
        'ticket-2',
        pendingSignIn({ username: 'bob', agent: null, scope: ['read'] }),
      )
      const taken = await Promise.all(
        Array.from({ length: 10 }, (_, i) => racing(i).factors.takePendingSignIn('ticket-1', T0 + 1)),
      )
      expect(taken.filter((signIn) => signIn !== null)).toEqual([pendingSignIn()])
      expect(await racing(1).factors.takePendingSignIn('ticket-1', T0 + 2)).toBeNull()
      expect(await racing(1).factors.takePendingSignIn('ticket-2', T0 + 2)).toEqual(
        pendingSignIn({ username: 'bob', agent: null, scope: ['read'] }),
      )
      // One whose time ended is not given back, and is gone.
      await stores().factors.savePendingSignIn('ticket-3', pendingSignIn())
      expect(await stores().factors.takePendingSignIn('ticket-3', T0 + MINUTE)).toBeNull()
      expect(await stores().factors.takePendingSignIn('ticket-3', T0)).toBeNull()
      expect(await stores().factors.takePendingSignIn('unknown', T0)).toBeNull()
    })

    it('deletes pending sign-ins whose time ended in batches no larger than the limit', async () => {
      for (let i = 0; i < 5; i++)
        await stores().factors.savePendingSignIn(`old-${i}`, pendingSignIn({ expiresAt: T0 + i }))
      await stores().factors.savePendingSignIn('live', pendingSignIn())
      expect(await stores().factors.deleteExpiredSignIns(T0 + 4, 3)).toBe(3)
      expect(await stores().factors.deleteExpiredSignIns(T0 + 4, 3)).toBe(2)
      expect(await stores().factors.deleteExpiredSignIns(T0 + 4, 3)).toBe(0)
      expect(await stores().factors.takePendingSignIn('live', T0 + 4)).toEqual(pendingSignIn())
    })

    it('keeps names of any text apart, however alike', async () => {
      const alike = ['admin', 'admin ', 'Admin', 'ü 🙂', 'admin\u0000', 'admin\\u0000']
      for (const [i, name] of alike.entries()) {
        await stores().factors.startTotp(name, `sealed-${i}`, T0)
        await stores().factors.replaceRecoveryCodes(name, [`code-${i}`], T0)
      }
      for (const [i, name] of alike.entries()) {
        expect(await stores().factors.findTotp(name)).toMatchObject({ username: name, secret: `sealed-${i}` })
        expect(await stores().factors.useRecoveryCode(name, `code-${(i + 1) % alike.length}`)).toBe(false)
        expect(await stores().factors.useRecoveryCode(name, `code-${i}`)).toBe(true)
      }
    })
  })
}
