"""Operations data migrations share. Import them from migrations only; they use the historical models."""


def permission_mover(moves):
    """Return a RunPython function that moves permissions off the old table-less desk.StaffAccess holder.

    `moves`: (codename, app_label, model) — the model that declares the permission now. Groups and users
    keep it: the row is re-pointed, or, when the new row exists already (post_migrate created it), its
    links are copied to that row and the old one goes.
    """

    def move(apps, schema_editor):
        ContentType = apps.get_model("contenttypes", "ContentType")
        Permission = apps.get_model("auth", "Permission")
        for codename, app_label, model in moves:
            old = Permission.objects.filter(content_type__app_label="desk", content_type__model="staffaccess",
                                            codename=codename).first()
            if old is None:
                continue
            target, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
            current = Permission.objects.filter(content_type=target, codename=codename).first()
            if current is None:
                old.content_type = target
                old.save(update_fields=["content_type"])
                continue
            for group in old.group_set.all():
                group.permissions.add(current)
            for user in old.user_set.all():
                user.user_permissions.add(current)
            old.delete()

    return move
