-- A lease is taken only for an account that is active (as for a key since 0006): an account disabled on one instance
-- (POST /api/accounts/:id/disable) is refused by the database on every other, even by one whose key cache has not
-- heard of it yet.
CREATE OR REPLACE FUNCTION sb_lease_take(p_lease text, p_existing boolean, p_account integer, p_token integer, p_need bigint, p_min bigint, p_extra bigint, p_in_use bigint, p_ttl_secs integer)
RETURNS TABLE (o_taken bigint, o_balance bigint, o_token_room bigint, o_found boolean, o_lost boolean, o_others bigint)
LANGUAGE plpgsql AS $$
DECLARE
	v_balance bigint;
	v_limit bigint;
	v_spent bigint;
	v_reserved bigint;
	v_room bigint;
	v_headroom bigint;
	v_take bigint;
	v_others bigint;
	v_status text;
	v_expires timestamptz;
BEGIN
	SELECT a.balance INTO v_balance FROM accounts a WHERE a.id = p_account AND a.status = 'active' FOR UPDATE;
	IF NOT FOUND THEN
		RETURN QUERY SELECT NULL::bigint, NULL::bigint, NULL::bigint, false, false, 0::bigint;
		RETURN;
	END IF;
	IF p_token IS NOT NULL THEN
		SELECT t.spend_limit, t.spent, t.reserved, t.status, t.expires_at INTO v_limit, v_spent, v_reserved, v_status, v_expires FROM api_tokens t WHERE t.id = p_token FOR UPDATE;
		-- A key disabled, deleted or expired takes nothing, whatever an instance's key cache still says: answered as
		-- not found (401 to the caller), so an instance that has not heard of the change yet cannot spend on it.
		IF NOT FOUND OR v_status <> 'active' OR (v_expires IS NOT NULL AND v_expires <= now()) THEN
			RETURN QUERY SELECT NULL::bigint, NULL::bigint, NULL::bigint, false, false, 0::bigint;
			RETURN;
		END IF;
		IF v_limit IS NOT NULL THEN
			v_room := v_limit - v_spent - v_reserved;
		END IF;
	END IF;
	PERFORM 1 FROM ledger_leases l WHERE l.id = p_lease FOR UPDATE;
	IF p_existing AND NOT FOUND THEN
		RETURN QUERY SELECT NULL::bigint, v_balance, v_room, true, true, 0::bigint;
		RETURN;
	END IF;
	v_headroom := LEAST(v_balance, COALESCE(v_room, v_balance));
	IF v_headroom < p_min OR (v_headroom <= 0 AND p_need > 0) THEN
		IF v_room IS NOT NULL AND v_room < v_balance THEN
			SELECT COALESCE(SUM(GREATEST(0, l.amount - l.in_use)), 0) INTO v_others FROM ledger_leases l WHERE l.token_id = p_token AND l.id <> p_lease;
		ELSE
			SELECT COALESCE(SUM(GREATEST(0, l.amount - l.in_use)), 0) INTO v_others FROM ledger_leases l WHERE l.account_id = p_account AND l.id <> p_lease;
		END IF;
		RETURN QUERY SELECT NULL::bigint, v_balance, v_room, true, false, v_others;
		RETURN;
	END IF;
	v_take := GREATEST(0, LEAST(v_headroom, p_need + LEAST(p_extra, GREATEST(0, (v_headroom - p_need) / 4))));
	UPDATE accounts SET balance = accounts.balance - v_take WHERE accounts.id = p_account;
	IF p_token IS NOT NULL THEN
		UPDATE api_tokens SET reserved = api_tokens.reserved + v_take WHERE api_tokens.id = p_token;
	END IF;
	IF p_existing THEN
		UPDATE ledger_leases SET amount = ledger_leases.amount + v_take, in_use = p_in_use, expires_at = now() + make_interval(secs => p_ttl_secs)
		WHERE ledger_leases.id = p_lease;
	ELSE
		-- The row may exist when the first take's reply was lost after its commit: this take adds to it. What that one
		-- took stays in the row unknown to the instance, and goes back with the lease (sb_lease_return gives back all
		-- but what is in use).
		INSERT INTO ledger_leases (id, account_id, token_id, amount, in_use, expires_at)
		VALUES (p_lease, p_account, p_token, v_take, p_in_use, now() + make_interval(secs => p_ttl_secs))
		ON CONFLICT (id) DO UPDATE SET amount = ledger_leases.amount + EXCLUDED.amount, in_use = EXCLUDED.in_use, expires_at = EXCLUDED.expires_at;
	END IF;
	RETURN QUERY SELECT v_take, v_balance, v_room, true, false, 0::bigint;
END
$$;
