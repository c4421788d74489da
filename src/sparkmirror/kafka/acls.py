"""Topic ACLs of one cluster through librdkafka's admin API, as `model.TopicAcl` values.

A cluster without an authorizer answers SECURITY_DISABLED: `topic_acls` returns None for it, so a caller
can tell "no ACLs at all" from "ACLs are not a thing here" (librdkafka hides that answer to DescribeAcls,
so an empty list is checked with a DeleteAcls that matches nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)

from sparkmirror.kafka.connection import CALL_TIMEOUT_S, AdminConnection
from sparkmirror.kafka.failures import error_code, operation_error
from sparkmirror.model import TopicAcl

_ALTER_HINT = ("Grant ALTER on the cluster to the principal used for cluster '{alias}' (it creates and deletes "
               "ACLs), or set '<source>-><target>.sync.topic.acls.enabled = false'")
_DESCRIBE_HINT = ("Grant DESCRIBE on the cluster to the principal used for cluster '{alias}' (it lists ACLs), or "
                  "set '<source>-><target>.sync.topic.acls.enabled = false'")
_PROBE = "sparkmirror-authorizer-probe"  # no ACL names it: deleting its ACLs changes nothing
_AUTH_CODES = (KafkaError.CLUSTER_AUTHORIZATION_FAILED, KafkaError.TOPIC_AUTHORIZATION_FAILED)


class AclAdmin(AdminConnection):
    """Lists, creates and deletes topic ACLs; every error names the cluster and, when refused, the grant."""

    def topic_acls(self) -> frozenset[TopicAcl] | None:
        """Every ACL on a topic resource (LITERAL and PREFIXED); None when the cluster has no authorizer."""
        everything = AclBindingFilter(ResourceType.TOPIC, None, ResourcePatternType.ANY, None, None,
                                      AclOperation.ANY, AclPermissionType.ANY)
        try:
            future = self._admin.describe_acls(everything, request_timeout=CALL_TIMEOUT_S)
            bindings = self._answer(future, CALL_TIMEOUT_S, "list topic ACLs")
        except KafkaException as exc:
            if error_code(exc) == KafkaError.SECURITY_DISABLED:
                return None
            raise operation_error(self.alias, "list topic ACLs", exc, self._hints(_DESCRIBE_HINT)) from None
        if not bindings and not self._has_authorizer():
            return None
        return frozenset(_acl(b) for b in bindings)  # type: ignore[union-attr]

    def _has_authorizer(self) -> bool:
        """Whether the cluster has an authorizer, asked by deleting ACLs that cannot exist.

        A broker without one answers DescribeAcls with SECURITY_DISABLED, but librdkafka reports that as an
        empty list, the same as an authorizer holding no ACLs; its DeleteAcls result keeps the error. A
        refusal (no ALTER on the cluster) also means an authorizer is there.
        """
        nothing = AclBindingFilter(ResourceType.TOPIC, _PROBE, ResourcePatternType.LITERAL, f"User:{_PROBE}", "*",
                                   AclOperation.READ, AclPermissionType.DENY)
        try:
            (future,) = self._admin.delete_acls([nothing], request_timeout=CALL_TIMEOUT_S).values()
            self._answer(future, CALL_TIMEOUT_S, "list topic ACLs (probe for an authorizer)")
        except KafkaException as exc:
            code = error_code(exc)
            if code == KafkaError.SECURITY_DISABLED:
                return False
            if code not in _AUTH_CODES:
                raise operation_error(self.alias, "list topic ACLs", exc) from None
        return True

    def create_acls(self, acls: Collection[TopicAcl]) -> dict[TopicAcl, Exception | None]:
        """Create topic ACLs; per ACL: None where it worked, an error naming it otherwise."""
        return self._each(acls, "create", _binding, self._admin.create_acls)

    def delete_acls(self, acls: Collection[TopicAcl]) -> dict[TopicAcl, Exception | None]:
        """Delete exactly these topic ACLs (each filter matches one binding); per ACL results."""
        return self._each(acls, "delete", _filter, self._admin.delete_acls)

    def _each(self, acls: Collection[TopicAcl], verb: str, request: Callable[[TopicAcl], object],
              call: Callable[..., Mapping[object, object]]) -> dict[TopicAcl, Exception | None]:
        """One admin request for all of `acls`, then each one's outcome."""
        if not acls:
            return {}
        ordered = sorted(acls)
        requests = [request(a) for a in ordered]
        futures = call(requests, request_timeout=CALL_TIMEOUT_S)
        return {a: self._outcome(futures[r], f"{verb} ACL ({a})") for a, r in zip(ordered, requests, strict=True)}

    def _outcome(self, future: object, operation: str) -> Exception | None:
        try:
            self._answer(future, CALL_TIMEOUT_S, operation)  # type: ignore[arg-type]
        except KafkaException as exc:
            return operation_error(self.alias, operation, exc, self._hints(_ALTER_HINT))
        return None

    def _hints(self, hint: str) -> Mapping[int, str]:
        return dict.fromkeys(_AUTH_CODES, hint.format(alias=self.alias))


def _acl(binding: AclBinding) -> TopicAcl:
    return TopicAcl(binding.resource_pattern_type.name, binding.name, binding.principal, binding.host,
                    binding.operation.name, binding.permission_type.name)


def _binding(acl: TopicAcl) -> AclBinding:
    return AclBinding(ResourceType.TOPIC, acl.name, ResourcePatternType[acl.pattern_type], acl.principal, acl.host,
                      AclOperation[acl.operation], AclPermissionType[acl.permission])


def _filter(acl: TopicAcl) -> AclBindingFilter:
    return AclBindingFilter(ResourceType.TOPIC, acl.name, ResourcePatternType[acl.pattern_type], acl.principal,
                            acl.host, AclOperation[acl.operation], AclPermissionType[acl.permission])
