"""Bad input to the real services (platform issue, "Bad input"): a malformed
request gets INVALID_ARGUMENT, an illegal move FAILED_PRECONDITION with the
rule's reason, a stale expected version ABORTED, an unknown game or table
NOT_FOUND; the same idempotency key twice gives the first answer and applies
once. In every case the stream and the state are unchanged."""

from __future__ import annotations

import json
import uuid

import grpc
import pytest

from roundhouse.v1 import game_pb2, lobby_pb2
from services.platform.grpc_errors import error_reason
from services.platform.hotstore import KeySpace
from services.rules import protomap

pytestmark = pytest.mark.integration
TITLE = "railbarons"


def new_game(rules, players=4, seed=11):
    stub = rules[TITLE]
    created = stub.CreateGame(
        game_pb2.CreateGameRequest(title=TITLE, num_players=players, seed=seed)
    )
    return stub, created.info.game_id


def snapshot(stub, rdb, prefix, game_id):
    view = stub.GetView(game_pb2.GetViewRequest(game_id=game_id))
    return (
        view.version,
        view.view_json,
        rdb.xlen(KeySpace(prefix).log(game_id)),
        rdb.hlen(KeySpace(prefix).idem(game_id)),
    )


def code_of(err: grpc.RpcError) -> str:
    return error_reason(err)


def first_legal(stub, game_id):
    view = stub.GetView(game_pb2.GetViewRequest(game_id=game_id))
    seat = view.active_seats[0]
    legal = stub.ListLegalActions(game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat))
    return view.version, seat, legal


def submit(stub, game_id, seat, version, action_json=None, action=None, key=""):
    req = game_pb2.SubmitActionRequest(
        game_id=game_id, seat=seat, expected_version=version, idempotency_key=key
    )
    if action is not None:
        req.action.CopyFrom(action)
    elif action_json is not None:
        req.action_json = action_json
    return stub.SubmitAction(req, timeout=10)


@pytest.mark.parametrize(
    "bad",
    [
        "not json",
        '{"type": "no_such_move"}',
        '{"type": "bid"}',
        '{"type": "bid", "amount": "7"}',
        '{"type": "bid", "amount": 7, "extra": 1}',
        "[]",
    ],
)
def test_malformed_actions_are_invalid_argument(rules, rdb, stack, bad):
    stub, game_id = new_game(rules)
    version, seat, _ = first_legal(stub, game_id)
    before = snapshot(stub, rdb, stack.prefix, game_id)
    with pytest.raises(grpc.RpcError) as err:
        submit(stub, game_id, seat, version, action_json=bad, key="k-" + uuid.uuid4().hex)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.value.details()
    assert snapshot(stub, rdb, stack.prefix, game_id) == before


def test_typed_action_of_another_title_or_empty_is_invalid_argument(rules, rdb, stack):
    stub, game_id = new_game(rules)
    version, seat, legal = first_legal(stub, game_id)
    before = snapshot(stub, rdb, stack.prefix, game_id)
    other = game_pb2.Action()
    other.transsib.SetInParent()
    for action in (other, game_pb2.Action()):
        with pytest.raises(grpc.RpcError) as err:
            submit(stub, game_id, seat, version, action=action)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:  # no action at all
        submit(stub, game_id, seat, version)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert snapshot(stub, rdb, stack.prefix, game_id) == before


def test_bad_seat_and_bad_requests_are_invalid_argument(rules):
    stub, game_id = new_game(rules)
    version, seat, legal = first_legal(stub, game_id)
    for bad_seat in (-1, 4, 99):
        with pytest.raises(grpc.RpcError) as err:
            submit(stub, game_id, bad_seat, version, action_json=legal.actions_json[0])
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    bad_creates = [
        game_pb2.CreateGameRequest(title="transsib", num_players=4),
        game_pb2.CreateGameRequest(title=TITLE, num_players=1),
        game_pb2.CreateGameRequest(title=TITLE, num_players=9),
        game_pb2.CreateGameRequest(title=TITLE, num_players=4, options_json="[1]"),
        game_pb2.CreateGameRequest(title=TITLE, num_players=4, options_json='{"no_such": 1}'),
        game_pb2.CreateGameRequest(title=TITLE, num_players=4, game_id="bad id!"),
    ]
    for req in bad_creates:
        with pytest.raises(grpc.RpcError) as err:
            stub.CreateGame(req)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, req
    with pytest.raises(grpc.RpcError) as err:
        stub.CreateGame(game_pb2.CreateGameRequest(title=TITLE, num_players=4, game_id=game_id))
    assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS


def test_illegal_moves_are_failed_precondition_with_the_rule(rules, rdb, stack):
    stub, game_id = new_game(rules)
    version, seat, legal = first_legal(stub, game_id)
    before = snapshot(stub, rdb, stack.prefix, game_id)
    other_seat = (seat + 1) % 4
    with pytest.raises(grpc.RpcError) as err:
        submit(stub, game_id, other_seat, version, action_json=legal.actions_json[0])
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert code_of(err.value) == "not_your_turn"
    # a well-formed move that is not legal now
    legal_now = set(legal.actions_json)
    for candidate in (
        '{"type":"develop","hex":"A2"}',
        '{"type":"done"}',
        '{"type":"bid","amount":99999}',
        '{"type":"choose_dial","dial":"expand"}',
    ):
        if json.dumps(json.loads(candidate), sort_keys=True, separators=(",", ":")) in legal_now:
            continue
        with pytest.raises(grpc.RpcError) as err:
            submit(stub, game_id, seat, version, action_json=candidate)
        assert err.value.code() in (
            grpc.StatusCode.FAILED_PRECONDITION,
            grpc.StatusCode.INVALID_ARGUMENT,
        )
        if err.value.code() == grpc.StatusCode.FAILED_PRECONDITION:
            assert len(err.value.details()) > 10 and code_of(err.value)
    assert snapshot(stub, rdb, stack.prefix, game_id) == before


def test_stale_expected_version_is_aborted_and_a_future_one_out_of_range(rules, rdb, stack):
    stub, game_id = new_game(rules)
    version, seat, legal = first_legal(stub, game_id)
    submit(stub, game_id, seat, version, action_json=legal.actions_json[0])
    version2, seat2, legal2 = first_legal(stub, game_id)
    before = snapshot(stub, rdb, stack.prefix, game_id)
    for sent, code, reason in (
        (version, grpc.StatusCode.ABORTED, "stale_version"),
        (version2 + 1, grpc.StatusCode.OUT_OF_RANGE, "future_version"),
        (version2 + 100, grpc.StatusCode.OUT_OF_RANGE, "future_version"),
        (-1, grpc.StatusCode.INVALID_ARGUMENT, "bad_version"),
    ):
        with pytest.raises(grpc.RpcError) as err:
            submit(stub, game_id, seat2, sent, action_json=legal2.actions_json[0])
        assert (err.value.code(), code_of(err.value)) == (code, reason)
    assert snapshot(stub, rdb, stack.prefix, game_id) == before


def test_unknown_games_are_not_found(rules):
    stub = rules[TITLE]
    calls = [
        lambda: stub.GetView(game_pb2.GetViewRequest(game_id="nope")),
        lambda: stub.ListLegalActions(game_pb2.ListLegalActionsRequest(game_id="nope")),
        lambda: submit(stub, "nope", 0, 0, action_json='{"type":"pass"}'),
        lambda: stub.GetResult(game_pb2.GetResultRequest(game_id="nope")),
        lambda: list(stub.WatchGame(game_pb2.WatchGameRequest(game_id="nope"))),
    ]
    for call in calls:
        with pytest.raises(grpc.RpcError) as err:
            call()
        assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_result_of_a_running_game_is_failed_precondition(rules):
    stub, game_id = new_game(rules)
    with pytest.raises(grpc.RpcError) as err:
        stub.GetResult(game_pb2.GetResultRequest(game_id=game_id))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_same_idempotency_key_gives_the_first_answer_and_applies_once(rules, rdb, stack):
    stub, game_id = new_game(rules)
    version, seat, legal = first_legal(stub, game_id)
    typed = legal.actions[0]
    first = submit(stub, game_id, seat, version, action=typed, key="same-key")
    after_first = snapshot(stub, rdb, stack.prefix, game_id)
    again = submit(stub, game_id, seat, version, action=typed, key="same-key")
    assert again == first
    # the key stands for that request: reused for another move it is refused
    with pytest.raises(grpc.RpcError) as err:
        submit(stub, game_id, seat, version, action_json=legal.actions_json[-1], key="same-key")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(err.value) == "idempotency_key_reused"
    assert snapshot(stub, rdb, stack.prefix, game_id) == after_first
    assert after_first[0] == version + 1


def test_idempotency_keys_belong_to_one_seat(rules, rdb, stack):
    """Another seat sending the same key text makes its own move."""
    stub, game_id = new_game(rules)
    version, seat, legal = first_legal(stub, game_id)
    submit(stub, game_id, seat, version, action=legal.actions[0], key="k")
    version2, seat2, legal2 = first_legal(stub, game_id)
    if seat2 == seat:
        pytest.fail("the opening needs two different seats to act in turn")
    answer = submit(stub, game_id, seat2, version2, action=legal2.actions[0], key="k")
    assert answer.version == version2 + 1


def test_concurrent_twins_of_one_request_all_get_the_first_answer(rules, rdb, stack):
    """A client retrying while its first try is in flight: one move, same answer."""
    from concurrent.futures import ThreadPoolExecutor

    stub, game_id = new_game(rules)
    version, seat, legal = first_legal(stub, game_id)
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(
                lambda _: submit(stub, game_id, seat, version, action=legal.actions[0], key="twin"),
                range(8),
            )
        )
    assert all(a == answers[0] for a in answers)
    assert rdb.xlen(KeySpace(stack.prefix).log(game_id)) == 1


def test_typed_actions_and_json_are_the_same_move(rules):
    stub, game_id = new_game(rules)
    _, _, legal = first_legal(stub, game_id)
    for typed, text in zip(legal.actions, legal.actions_json, strict=True):
        assert protomap.action_from_proto(typed, TITLE) == json.loads(text)


def test_lobby_bad_input(lobby, anonymous_lobby, people, rules, rdb, stack):
    for bad in (
        lobby_pb2.CreateTableRequest(title="chess", num_players=2),
        lobby_pb2.CreateTableRequest(title=TITLE, num_players=0),
        lobby_pb2.CreateTableRequest(title=TITLE, num_players=4, options_json="x"),
        lobby_pb2.CreateTableRequest(title=TITLE, num_players=4, options_json='{"bogus": 1}'),
        lobby_pb2.CreateTableRequest(title=TITLE, num_players=7),
    ):
        with pytest.raises(grpc.RpcError) as err:
            lobby.CreateTable(bad)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:
        lobby.GetTable(lobby_pb2.GetTableRequest(table_id="nope"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as err:  # creating a table needs an account
        anonymous_lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=3))
    assert (err.value.code(), code_of(err.value)) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "token_missing",
    )

    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=3))
    tid = table.table_id
    ada, bob, cy = people.sign_up(), people.sign_up(), people.sign_up()
    with pytest.raises(grpc.RpcError) as err:
        lobby.AddBot(lobby_pb2.AddBotRequest(table_id=tid, seat=1, policy="clairvoyant"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=ada.md)
    with pytest.raises(grpc.RpcError) as err:
        lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=bob.md)
    assert (err.value.code(), code_of(err.value)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "seat_taken",
    )
    with pytest.raises(grpc.RpcError) as err:
        lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=7), metadata=bob.md)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:
        lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as err:  # only the owner starts it
        lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md)
    assert (err.value.code(), code_of(err.value)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "not_owner",
    )
    lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=1), metadata=bob.md)
    lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=2), metadata=cy.md)
    table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid))
    with pytest.raises(grpc.RpcError) as err:
        lobby.AddBot(lobby_pb2.AddBotRequest(table_id=tid, seat=1, policy="random"))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    stub = rules[TITLE]
    view = stub.GetView(game_pb2.GetViewRequest(game_id=table.game_id))
    seat = view.active_seats[0]
    legal = stub.ListLegalActions(
        game_pb2.ListLegalActionsRequest(game_id=table.game_id, seat=seat)
    )
    move = lobby_pb2.SubmitMoveRequest(
        table_id=tid, seat=seat, expected_version=view.version, action_json=legal.actions_json[0]
    )
    before = snapshot(stub, rdb, stack.prefix, table.game_id)
    with pytest.raises(grpc.RpcError) as err:
        anonymous_lobby.SubmitMove(move)
    assert (err.value.code(), code_of(err.value)) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "token_missing",
    )
    with pytest.raises(grpc.RpcError) as err:
        lobby.SubmitMove(move, metadata=(("authorization", "Bearer rh_forged-forged-forged"),))
    assert (err.value.code(), code_of(err.value)) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "token_invalid",
    )
    other = [ada, bob, cy][(seat + 1) % 3]  # a real token of another seat's account
    with pytest.raises(grpc.RpcError) as err:
        lobby.SubmitMove(move, metadata=other.md)
    assert (err.value.code(), code_of(err.value)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "not_your_seat",
    )
    assert snapshot(stub, rdb, stack.prefix, table.game_id) == before
    with pytest.raises(grpc.RpcError) as err:
        lobby.GetTableResult(lobby_pb2.GetTableRequest(table_id=tid))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_a_player_moves_through_the_lobby_and_illegal_moves_are_relayed(
    lobby, people, rules, rdb, stack
):
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=2))
    players = {seat: people.sign_up() for seat in range(2)}
    for seat, person in players.items():
        lobby.JoinSeat(
            lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=seat), metadata=person.md
        )
    table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    stub = rules[TITLE]
    view = stub.GetView(game_pb2.GetViewRequest(game_id=table.game_id))
    seat = view.active_seats[0]
    md = players[seat].md
    legal = stub.ListLegalActions(
        game_pb2.ListLegalActionsRequest(game_id=table.game_id, seat=seat)
    )
    base = dict(table_id=table.table_id, seat=seat)
    before = snapshot(stub, rdb, stack.prefix, table.game_id)
    with pytest.raises(grpc.RpcError) as err:
        lobby.SubmitMove(
            lobby_pb2.SubmitMoveRequest(
                **base, expected_version=view.version, action_json='{"type":"done"}'
            ),
            metadata=md,
        )
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        lobby.SubmitMove(
            lobby_pb2.SubmitMoveRequest(
                **base, expected_version=view.version + 3, action=legal.actions[0]
            ),
            metadata=md,
        )
    assert err.value.code() == grpc.StatusCode.OUT_OF_RANGE  # relayed by the lobby
    assert code_of(err.value) == "future_version"
    assert snapshot(stub, rdb, stack.prefix, table.game_id) == before
    answer = lobby.SubmitMove(
        lobby_pb2.SubmitMoveRequest(**base, expected_version=view.version, action=legal.actions[0]),
        metadata=md,
    )
    assert answer.version == view.version + 1
    first = next(
        iter(lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=table.table_id), timeout=10))
    )
    assert (first.version, first.seat, first.action_json) == (1, seat, legal.actions_json[0])


def test_a_move_for_a_bot_seat_is_permission_denied(lobby, people):
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=2))
    ada = people.sign_up()
    lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=0), metadata=ada.md)
    lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=1, policy="random"))
    table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    assert table.seats[1].name == "random-bot" and table.seats[1].bot_account
    with pytest.raises(grpc.RpcError) as err:
        lobby.SubmitMove(
            lobby_pb2.SubmitMoveRequest(
                table_id=table.table_id,
                seat=1,
                expected_version=0,
                action_json='{"type":"pass"}',
            ),
            metadata=ada.md,
        )
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert code_of(err.value) == "not_your_seat"


def test_a_fixed_seed_is_refused_at_a_table_with_players(lobby, people):
    """Whoever knows the seed knows the hidden cards: seeds are for tables of bots."""
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=2, seed=5))
    ada = people.sign_up()
    lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=0), metadata=ada.md)
    lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=1, policy="random"))
    with pytest.raises(grpc.RpcError) as err:
        lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert code_of(err.value) == "seed_with_players"
    assert lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table.table_id)).status == (
        lobby_pb2.TABLE_STATUS_OPEN
    )


def test_seat_views_and_moves_need_the_seats_account(lobby, anonymous_lobby, people, accounts):
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=2))
    tid = table.table_id
    players = [people.sign_up() for _ in range(2)]
    for s, person in enumerate(players):
        lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=s), metadata=person.md)
    with pytest.raises(grpc.RpcError) as err:  # not started yet
        anonymous_lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=tid))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid))
    spectator = anonymous_lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=tid))
    mine = lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=players[0].md)
    assert spectator.version == mine.version == 0
    # the seat belongs to the account: a second sign-in (another client) holds it too
    from roundhouse.v1 import accounts_pb2

    again = accounts.CreateToken(
        accounts_pb2.CreateTokenRequest(
            username=players[0].username, password="integration password", scopes=["play"]
        )
    ).token
    elsewhere = lobby.GetSeatView(
        lobby_pb2.SeatRequest(table_id=tid, seat=0),
        metadata=(("authorization", f"Bearer {again}"),),
    )
    assert elsewhere.view_json == mine.view_json
    for bad, who, code, reason in [
        (
            lobby_pb2.SeatRequest(table_id=tid, seat=0),
            anonymous_lobby,
            grpc.StatusCode.UNAUTHENTICATED,
            "token_missing",
        ),
        (
            lobby_pb2.SeatRequest(table_id=tid, seat=0),
            players[1].md,
            grpc.StatusCode.PERMISSION_DENIED,
            "not_your_seat",
        ),
        (
            lobby_pb2.SeatRequest(table_id=tid, seat=5),
            players[0].md,
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_seat",
        ),
        (
            lobby_pb2.SeatRequest(table_id="nope", seat=0),
            players[0].md,
            grpc.StatusCode.NOT_FOUND,
            "unknown_table",
        ),
    ]:
        for name in ("GetSeatView", "ListMoves"):
            with pytest.raises(grpc.RpcError) as err:
                if who is anonymous_lobby:
                    getattr(anonymous_lobby, name)(bad)
                else:
                    getattr(lobby, name)(bad, metadata=who)
            assert (err.value.code(), code_of(err.value)) == (code, reason)
    with pytest.raises(grpc.RpcError) as err:
        lobby.ListMoves(lobby_pb2.SeatRequest(table_id=tid), metadata=players[0].md)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    active = mine.active_seats[0]
    md = players[active].md
    moves = lobby.ListMoves(lobby_pb2.SeatRequest(table_id=tid, seat=active), metadata=md)
    assert moves.actions_json and len(moves.actions) == len(moves.actions_json)
    assert len(moves.ranges) == len(moves.actions)  # the lobby forwards each entry's range
    assert not [r for r in moves.ranges if r.field]  # Chicago Express lists every bid
    answer = lobby.SubmitMove(
        lobby_pb2.SubmitMoveRequest(
            table_id=tid, seat=active, expected_version=0, action=moves.actions[0]
        ),
        metadata=md,
    )
    assert answer.version == 1
    with pytest.raises(grpc.RpcError) as err:  # no move at all
        lobby.SubmitMove(
            lobby_pb2.SubmitMoveRequest(table_id=tid, seat=active, expected_version=1),
            metadata=md,
        )
    assert (err.value.code(), code_of(err.value)) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "missing_action",
    )


def test_rules_services_refuse_calls_without_internal_credentials(
    anonymous_rules, internal_md, rdb, stack
):
    """The rules services are internal: CreateGame, SubmitAction, Resign and the reads (a
    seat's hidden view) need the internal secret (UNAUTHENTICATED otherwise, nothing
    written)."""
    stub = anonymous_rules[TITLE]
    game_id = f"auth-{uuid.uuid4().hex[:8]}"
    create = game_pb2.CreateGameRequest(title=TITLE, num_players=3, game_id=game_id)
    wrong = (("authorization", "Internal wrong-secret"), ("x-roundhouse-service", "tests"))
    person = (("authorization", "Bearer rh_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),)
    for metadata, reason in (
        ((), "token_missing"),
        (wrong, "token_invalid"),
        (person, "internal_only"),
    ):
        with pytest.raises(grpc.RpcError) as err:
            stub.CreateGame(create, metadata=metadata)
        assert (err.value.code(), code_of(err.value)) == (grpc.StatusCode.UNAUTHENTICATED, reason)
    assert rdb.get(KeySpace(stack.prefix).meta(game_id)) is None
    stub.CreateGame(create, metadata=internal_md)
    for metadata, reason in (((), "token_missing"), (wrong, "token_invalid")):
        with pytest.raises(grpc.RpcError) as err:
            stub.GetView(game_pb2.GetViewRequest(game_id=game_id, seat=0), metadata=metadata)
        assert (err.value.code(), code_of(err.value)) == (grpc.StatusCode.UNAUTHENTICATED, reason)
    view = stub.GetView(game_pb2.GetViewRequest(game_id=game_id), metadata=internal_md)
    legal = stub.ListLegalActions(
        game_pb2.ListLegalActionsRequest(game_id=game_id, seat=view.active_seats[0]),
        metadata=internal_md,
    )
    for call, request in (
        (
            stub.SubmitAction,
            game_pb2.SubmitActionRequest(
                game_id=game_id,
                seat=view.active_seats[0],
                expected_version=0,
                action_json=legal.actions_json[0],
            ),
        ),
        (stub.Resign, game_pb2.ResignRequest(game_id=game_id, seat=0)),
    ):
        with pytest.raises(grpc.RpcError) as err:
            call(request)
        assert (err.value.code(), code_of(err.value)) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "token_missing",
        )
    assert rdb.xlen(KeySpace(stack.prefix).log(game_id)) == 0


def test_watch_bounds(rules):
    """A watch from beyond the game's version is OUT_OF_RANGE, from a negative
    one INVALID_ARGUMENT."""
    stub, game_id = new_game(rules)
    with pytest.raises(grpc.RpcError) as err:
        list(stub.WatchGame(game_pb2.WatchGameRequest(game_id=game_id, from_version=5)))
    assert err.value.code() == grpc.StatusCode.OUT_OF_RANGE
    with pytest.raises(grpc.RpcError) as err:
        list(stub.WatchGame(game_pb2.WatchGameRequest(game_id=game_id, from_version=-1)))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_ranged_moves_through_the_lobby_every_value_inside_none_outside(lobby, people):
    """1894's auction bids come with their ParameterRange through ListMoves; a bid one step
    above the range is refused with the rule, the range's max is accepted."""
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title="e1894", num_players=3))
    tid = table.table_id
    players = [people.sign_up() for _ in range(3)]
    for s, person in enumerate(players):
        lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=s), metadata=person.md)
    lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid))
    view = lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=tid))
    seat = view.active_seats[0]
    me = lobby_pb2.SeatRequest(table_id=tid, seat=seat)
    moves = lobby.ListMoves(me, metadata=players[seat].md)
    assert len(moves.ranges) == len(moves.actions) == len(moves.actions_json)
    ranged = [
        (json.loads(text), r)
        for text, r in zip(moves.actions_json, moves.ranges, strict=True)
        if r.field
    ]
    assert ranged and all((r.field, r.step) == ("price", 5) for _, r in ranged)
    bid, span = ranged[0]
    assert bid["type"] == "bid" and bid["price"] == span.min < span.max

    def move(price):
        return lobby.SubmitMove(
            lobby_pb2.SubmitMoveRequest(
                table_id=tid,
                seat=seat,
                expected_version=view.version,
                action_json=json.dumps({**bid, "price": price}),
            ),
            metadata=players[seat].md,
        )

    with pytest.raises(grpc.RpcError) as err:
        move(span.max + span.step)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert code_of(err.value) == "insufficient_cash"
    assert move(span.max).version == view.version + 1
