"""The "researchers" group: its members may create projects (annotation.add_project)
and add existing accounts to their projects."""

from django.db import migrations


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    # Permissions are normally created after migrate (post_migrate); this one is needed now.
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    project_type, _ = ContentType.objects.get_or_create(app_label="annotation", model="project")
    add_project, _ = Permission.objects.get_or_create(
        content_type=project_type, codename="add_project", defaults={"name": "Can add project"}
    )
    group, _ = Group.objects.get_or_create(name="researchers")
    group.permissions.add(add_project)


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    apps.get_model("auth", "Group").objects.filter(name="researchers").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0004_sec_pipeline_endpoint"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
