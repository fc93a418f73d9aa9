"""Garbage collection by ownerReferences, as kube-controller-manager's collector does it.

- Background: once every owner of an object is gone, the object is deleted.
  An object some of whose owners remain loses only the dangling references.
- Foreground: an owner carrying the `foregroundDeletion` finalizer has its
  dependents deleted (in the foreground those that have dependents of their own);
  a dependent another owner still holds loses only the references to owners
  gone or deleting in the foreground instead. When none that block it (`blockOwnerDeletion: true`) remain, the finalizer is
  removed and the owner goes.
- Orphan: an owner carrying the `orphan` finalizer has its reference removed
  from every dependent, then the finalizer is removed.

Keeps an index from uid to object and from owner uid to dependents, fed by the
store, so no decision needs a scan of the whole cluster.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Hashable

from stackwright.localcluster import status
from stackwright.localcluster.cluster import (
    FOREGROUND,
    ORPHAN,
    Cluster,
    DeleteOptions,
    WriteOptions,
)
from stackwright.localcluster.controllers.base import Controller, Retry
from stackwright.localcluster.registry import ResourceType
from stackwright.localcluster.store import DELETED, Change, Obj, TypeKey

Ref = tuple[TypeKey, str, str]  # (type, namespace, name)
MANAGER = "garbage-collector"


class GarbageCollector(Controller):
    name = "garbage-collector"

    def __init__(self, cluster: Cluster) -> None:
        self._by_uid: dict[str, Ref] = {}
        self._dependents: dict[str, set[Ref]] = {}
        self._owners_of: dict[Ref, set[str]] = {}
        super().__init__(cluster)
        store = cluster.store
        for key in store.type_keys():
            for obj in store.items(key):
                self._index(key, obj)

    # --- the index ---------------------------------------------------------------

    def _index(self, key: TypeKey, obj: Obj) -> Ref:
        meta = obj["metadata"]
        ref: Ref = (key, meta.get("namespace", ""), meta["name"])
        self._by_uid[meta["uid"]] = ref
        owners = {o["uid"] for o in meta.get("ownerReferences") or () if "uid" in o}
        for gone in self._owners_of.get(ref, set()) - owners:
            self._dependents.get(gone, set()).discard(ref)
        for owner in owners:
            self._dependents.setdefault(owner, set()).add(ref)
        if owners:
            self._owners_of[ref] = owners
        else:
            self._owners_of.pop(ref, None)
        return ref

    def _unindex(self, key: TypeKey, obj: Obj) -> Ref:
        meta = obj["metadata"]
        ref: Ref = (key, meta.get("namespace", ""), meta["name"])
        if self._by_uid.get(meta["uid"]) == ref:
            del self._by_uid[meta["uid"]]
        for owner in self._owners_of.pop(ref, set()):
            self._dependents.get(owner, set()).discard(ref)
        return ref

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.type == DELETED:
            self._unindex(change.key, change.obj)
            uid = change.obj["metadata"]["uid"]
            keys: list[Hashable] = [("orphans", uid)] if self._dependents.get(uid) else []
            # A dependent going away may unblock an owner in foreground deletion.
            keys += [("owner", owner) for owner in _owner_uids(change.obj) if owner in self._by_uid]
            return keys
        ref = self._index(change.key, change.obj)
        meta = change.obj["metadata"]
        keys = []
        if meta.get("deletionTimestamp") and {FOREGROUND, ORPHAN} & set(
            meta.get("finalizers") or ()
        ):
            keys.append(("owner", meta["uid"]))
        if any(owner not in self._by_uid for owner in _owner_uids(change.obj)):
            keys.append(("dependent", ref))
        return keys

    def initial_keys(self) -> list[Hashable]:
        keys: list[Hashable] = []
        for uid, ref in self._by_uid.items():
            obj = self.cluster.store.get(*ref)
            if obj is None:
                continue
            meta = obj["metadata"]
            if meta.get("deletionTimestamp") and {FOREGROUND, ORPHAN} & set(
                meta.get("finalizers") or ()
            ):
                keys.append(("owner", uid))
            if any(owner not in self._by_uid for owner in _owner_uids(obj)):
                keys.append(("dependent", ref))
        return keys

    # --- reconciling ---------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        kind, subject = key
        if kind == "orphans":
            for ref in list(self._dependents.get(subject, ())):
                self._collect(ref)
        elif kind == "dependent":
            self._collect(subject)
        elif kind == "owner":
            self._finish_owner(subject)

    def _rtype(self, key: TypeKey) -> ResourceType | None:
        for rtype in self.cluster.registry:
            if rtype.key == key and rtype.storage:
                return rtype
        return None

    def _collect(self, ref: Ref) -> None:
        """Delete a dependent whose owners are all gone; drop dangling references otherwise."""
        obj = self.cluster.store.get(*ref)
        rtype = self._rtype(ref[0])
        if obj is None or rtype is None:
            return
        refs = obj["metadata"].get("ownerReferences") or []
        alive = [o for o in refs if o.get("uid") in self._by_uid]
        if len(alive) == len(refs):
            return
        if alive:
            self._drop_references(
                rtype, ref, obj, {o.get("uid") for o in refs} - {o["uid"] for o in alive}
            )
            return
        if obj["metadata"].get("deletionTimestamp"):
            return
        with contextlib.suppress(status.NotFound):
            self.cluster.delete(rtype, ref[1], ref[2], DeleteOptions(propagation="Background"))

    def _finish_owner(self, uid: str) -> None:
        ref = self._by_uid.get(uid)
        if ref is None:
            return
        owner = self.cluster.store.get(*ref)
        rtype = self._rtype(ref[0])
        if owner is None or rtype is None or not owner["metadata"].get("deletionTimestamp"):
            return
        finalizers = list(owner["metadata"].get("finalizers") or [])
        dependents = [self.cluster.store.get(*d) for d in list(self._dependents.get(uid, ()))]
        present = [
            (d, dep)
            for d, dep in zip(list(self._dependents.get(uid, ())), dependents, strict=True)
            if dep
        ]
        if ORPHAN in finalizers:
            for dref, dep in present:
                drtype = self._rtype(dref[0])
                if drtype is not None:
                    self._drop_references(drtype, dref, dep, {uid})
            finalizers.remove(ORPHAN)
        elif FOREGROUND in finalizers:
            blocking = False
            for dref, dep in present:
                drtype = self._rtype(dref[0])
                if drtype is None:
                    continue
                if self._has_solid_owner(dep):
                    # Another owner keeps it: like kube-controller-manager's attemptToDeleteItem,
                    # drop the references of owners that are gone or deleting in the foreground.
                    waiting = {o for o in _owner_uids(dep) if not self._is_solid(o)}
                    self._drop_references(drtype, dref, dep, waiting)
                    continue
                if not dep["metadata"].get("deletionTimestamp"):
                    has_own = bool(self._dependents.get(dep["metadata"]["uid"]))
                    try:
                        self.cluster.delete(
                            drtype,
                            dref[1],
                            dref[2],
                            DeleteOptions(propagation="Foreground" if has_own else None),
                        )
                    except status.NotFound:
                        continue
                if self.cluster.store.get(*dref) is not None and _blocks(dep, uid):
                    blocking = True
            if blocking:
                raise Retry(0.5)  # also re-queued as each dependent disappears
            finalizers.remove(FOREGROUND)
        else:
            return
        updated = copy.deepcopy(owner)
        if finalizers:
            updated["metadata"]["finalizers"] = finalizers
        else:
            updated["metadata"].pop("finalizers", None)
        self.cluster.update(rtype, ref[1], ref[2], updated, WriteOptions(field_manager=MANAGER))

    def _is_solid(self, owner_uid: str) -> bool:
        """Whether an owner exists and is not waiting for its dependents (foreground deletion)."""
        ref = self._by_uid.get(owner_uid)
        owner = self.cluster.store.get(*ref) if ref else None
        if owner is None:
            return False
        meta = owner["metadata"]
        return not (meta.get("deletionTimestamp") and FOREGROUND in (meta.get("finalizers") or ()))

    def _has_solid_owner(self, obj: Obj) -> bool:
        return any(self._is_solid(owner) for owner in _owner_uids(obj))

    def _drop_references(self, rtype: ResourceType, ref: Ref, obj: Obj, owners: set[str]) -> None:
        """Remove the references to `owners` from `obj`, leaving the others as they are."""
        updated = copy.deepcopy(obj)
        meta = updated["metadata"]
        meta["ownerReferences"] = [
            o for o in meta.get("ownerReferences") or [] if o.get("uid") not in owners
        ]
        if not meta["ownerReferences"]:
            del meta["ownerReferences"]
        self.cluster.update(rtype, ref[1], ref[2], updated, WriteOptions(field_manager=MANAGER))


def _blocks(dependent: Obj, owner: str) -> bool:
    """Whether `dependent` holds `owner`'s foreground deletion: its reference says so."""
    return any(
        o.get("uid") == owner and o.get("blockOwnerDeletion") is True
        for o in dependent["metadata"].get("ownerReferences") or ()
    )


def _owner_uids(obj: Obj) -> list[str]:
    return [o["uid"] for o in obj["metadata"].get("ownerReferences") or () if "uid" in o]
