/**
 * The address classifier behind the SSRF guard (lib/safe-fetch.ts): every IPv6 spelling that leads back to a private
 * IPv4 address is private, and public addresses, in either family, stay reachable.
 */
import { describe, expect, it } from 'bun:test'
import { isPrivateAddress } from '../../../src/lib/safe-fetch'

describe('isPrivateAddress', () => {
	const priv = ['127.0.0.1', '10.1.2.3', '169.254.169.254', '100.100.100.200', '::', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::127.0.0.1', '::7f00:1', '::ffff:0:7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b::10.0.0.1', '64:ff9b:1::1', '2002:a9fe:a9fe::1', '2002:7f00:1::', '2001:0:4136:e378:8000:63bf:3fff:fdd2', 'fc00::1', 'fd00:ec2::254', 'fe80::1', 'fe80::1%eth0', 'fec0::1', 'ff02::1', '[::1]', 'not-an-address']
	for (const ip of priv) it(`should call ${ip} private`, () => expect(isPrivateAddress(ip)).toBe(true))
	const pub = ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']
	for (const ip of pub) it(`should call ${ip} public`, () => expect(isPrivateAddress(ip)).toBe(false))
})
